import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { version as uuidVersion } from 'uuid';
import { ExecutionEntity } from '../../../src/execution/execution.entity.js';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { executionScenario, insertAccount, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { json, Upstream } from './upstream.js';

describe('GET /v1/executions', () => {
  let app: TestApp;
  let upstream: Upstream;
  let search: Scenario;
  let create: Scenario;
  let secondOwner: string;
  let startedAt: string;

  const restFunction = (method: string, path: string) =>
    ({
      protocol: 'rest',
      protocol_data: { method, path, server_url: upstream.url },
      parameters: {
        type: 'object',
        properties: {
          body: {
            type: 'object',
            properties: { note: { type: 'string' } },
            required: [],
            visible: ['note'],
            additionalProperties: false,
          },
        },
        required: [],
        visible: ['body'],
        additionalProperties: false,
      },
    }) as Partial<FunctionEntity>;

  beforeAll(async () => {
    app = await TestApp.start({ EXECUTION_LOG_FLUSH_MS: '50' });
    upstream = await Upstream.start();
    upstream.respond(async (request, response) => {
      if (request.path === '/slow') {
        await new Promise((resolve) => setTimeout(resolve, 120));
        json(response, 200, { slow: true });
      } else {
        json(response, 404, { message: 'no such thing' });
      }
    });
    const { projectId } = await app.ctx.newProject();
    search = await executionScenario(app, {
      projectId,
      scheme: 'api_key',
      settings: { location: 'header', name: 'X-Key' },
      credentials: { api_key: 'key-that-must-not-be-logged' },
      function: restFunction('POST', '/slow'),
    });
    create = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: restFunction('POST', '/missing'),
    });
    secondOwner = (await insertAccount(app, projectId, search.app.name, 'api_key', {})).linked_account_owner_id;

    startedAt = new Date(Date.now() - 1000).toISOString();
    await search.execute({ body: { note: 'input-that-must-not-be-logged' } });
    await create.execute({ body: { note: 'x' } });
    await search.execute({}, { owner: secondOwner });
    // Pre-check failures are HTTP errors, not executions.
    await app.post('/v1/functions/NOPE__NOTHING/execute', { linked_account_owner_id: 'x' });
    await search.execute({ unknown: 1 });
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
  });

  it('writes the log off the response path, in the background', async () => {
    await expect
      .poll(() => app.dataSource.getRepository(ExecutionEntity).count(), { timeout: 3000, interval: 50 })
      .toBe(3);
  });

  it("lists the project's executions newest first, with what an operator needs and no inputs or secrets", async () => {
    const res = await app.get('/v1/executions');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        app_name: search.app.name,
        function_name: search.fn.name,
        linked_account_owner_id: secondOwner,
        success: false,
        upstream_status: null,
        duration_ms: expect.any(Number),
        error: `No API key to send: the linked account has none and app ${search.app.name} has no default API key`,
        created_at: expect.any(String),
        source: 'rest',
        mcp_token_id: null,
      },
      {
        id: expect.any(String),
        app_name: create.app.name,
        function_name: create.fn.name,
        linked_account_owner_id: create.owner,
        success: false,
        upstream_status: 404,
        duration_ms: expect.any(Number),
        error: 'Upstream answered HTTP 404: {"message":"no such thing"}',
        created_at: expect.any(String),
        source: 'rest',
        mcp_token_id: null,
      },
      {
        id: expect.any(String),
        app_name: search.app.name,
        function_name: search.fn.name,
        linked_account_owner_id: search.owner,
        success: true,
        upstream_status: 200,
        duration_ms: expect.any(Number),
        error: null,
        created_at: expect.any(String),
        source: 'rest',
        mcp_token_id: null,
      },
    ]);
    // Ids are version-7 UUIDs of the start time, so the newest-first list is in descending id order.
    for (const row of res.body as { id: string; created_at: string }[]) {
      expect(uuidVersion(row.id), row.id).toBe(7);
      expect(parseInt(row.id.replace(/-/g, '').slice(0, 12), 16)).toBe(Date.parse(row.created_at));
    }
    const ids = (res.body as { id: string }[]).map((row) => row.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const [, , slow] = res.body;
    expect(slow.duration_ms).toBeGreaterThanOrEqual(115);
    expect(Date.parse(slow.created_at)).toBeGreaterThanOrEqual(Date.parse(startedAt));
    expect(res.text).not.toContain('input-that-must-not-be-logged');
    expect(res.text).not.toContain('key-that-must-not-be-logged');
  });

  it('filters by function, app, owner, success and start time', async () => {
    const names = async (query: Record<string, string | boolean>) =>
      (
        (await app.get('/v1/executions', { query })).body as {
          function_name: string;
          linked_account_owner_id: string;
        }[]
      ).map((row) => `${row.function_name}/${row.linked_account_owner_id}`);
    expect(await names({ function_name: create.fn.name })).toEqual([`${create.fn.name}/${create.owner}`]);
    expect(await names({ app_name: search.app.name })).toEqual([
      `${search.fn.name}/${secondOwner}`,
      `${search.fn.name}/${search.owner}`,
    ]);
    expect(await names({ linked_account_owner_id: search.owner })).toEqual([`${search.fn.name}/${search.owner}`]);
    expect(await names({ success: true })).toEqual([`${search.fn.name}/${search.owner}`]);
    expect(await names({ success: false })).toHaveLength(2);
    expect(await names({ since: startedAt })).toHaveLength(3);
    expect(await names({ since: new Date(Date.now() + 60_000).toISOString() })).toEqual([]);
    expect(await names({ app_name: search.app.name, success: false })).toEqual([`${search.fn.name}/${secondOwner}`]);
  });

  it('pages with limit and offset', async () => {
    const all = (await app.get('/v1/executions')).body as { id: string }[];
    const page = (await app.get('/v1/executions', { query: { limit: 1, offset: 1 } })).body as { id: string }[];
    expect(page.map((row) => row.id)).toEqual([all[1].id]);
  });

  it("does not show another project's executions", async () => {
    const other = await app.ctx.newProject('other');
    const res = await app.get('/v1/executions', { apiKey: other.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it('answers 422 for invalid filters and 401 without a key', async () => {
    const res = await app.get('/v1/executions', { query: { since: 'yesterday', limit: 0, success: 'maybe' } });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: string[] }) => d.loc.join('.')).sort()).toEqual([
      'query.limit',
      'query.since',
      'query.success',
    ]);
    expect((await app.get('/v1/executions', { apiKey: null })).status).toBe(401);
  });
});
