import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppEntity } from '../../../src/apps/app.entity.js';
import { AuditEventEntity } from '../../../src/audit/audit-event.entity.js';
import { OpenApiImportService } from '../../../src/catalog/openapi/openapi-import.service.js';
import { McpServersService } from '../../../src/mcp-servers/mcp-servers.service.js';
import { McpTestServer, type TestTool } from '../../helpers/mcp-test-server.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { connectMcp } from '../mcp/mcp-client.js';

const SERVERS = '/v1/mcp-servers';

const TOOLS: TestTool[] = [
  {
    name: 'list_tickets',
    description: 'Lists the open support tickets of the signed-in user.',
    inputSchema: { type: 'object', properties: { limit: { type: 'integer', minimum: 1 } } },
    annotations: { readOnlyHint: true },
  },
  { name: 'close_ticket', description: 'Closes a ticket.', inputSchema: { type: 'object' } },
];

/**
 * A project adds a remote MCP server as its own app through the API (as `catalog add-mcp` does for the
 * catalogue), syncs and removes it; the app and its functions are seen, configured, linked and run by that
 * project alone, over REST and MCP, and refused to every other project as if they did not exist.
 */
describe('a project’s own remote MCP servers (POST/GET/DELETE /v1/mcp-servers)', { timeout: 120_000 }, () => {
  let app: TestApp;
  let server: McpTestServer;
  let tools: TestTool[];
  let owner: TestProject;
  let other: TestProject;

  beforeAll(async () => {
    app = await TestApp.start({ MCP_SERVERS_ALLOW_PRIVATE_NETWORKS: 'true' });
    tools = [...TOOLS];
    server = await McpTestServer.start({
      era: 'modern',
      tools: () => tools,
      call: (name, _args, ctx) => ({
        content: [{ type: 'text', text: JSON.stringify({ tool: name, user: ctx.user ?? null }) }],
      }),
      tokens: () => new Map([['token-zoe', 'zoe']]),
    });
    owner = await app.ctx.newProject('owner');
    other = await app.ctx.newProject('other');
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await app?.close();
  });

  const asOwner = { apiKey: '' };
  const asOther = { apiKey: '' };
  beforeAll(() => {
    asOwner.apiKey = owner.apiKey;
    asOther.apiKey = other.apiKey;
  });

  it('adds the server as a private app of the project, its tools as functions', async () => {
    const added = await app.post(
      SERVERS,
      { url: server.url, app_name: 'HELPDESK', auth: 'bearer', token: 'token-zoe', categories: ['support'] },
      asOwner,
    );
    expect(added.status, added.text).toBe(201);
    expect(added.body).toMatchObject({
      app_name: 'HELPDESK',
      url: server.url,
      server: { protocol_version: '2026-07-28' },
      security_schemes: ['http_bearer'],
      functions: { deactivated: [] },
      skipped: [],
    });
    expect([...(added.body.functions.added as string[])].sort()).toEqual([
      'HELPDESK__CLOSE_TICKET',
      'HELPDESK__LIST_TICKETS',
    ]);
    // The listing token is stored nowhere.
    const row = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'HELPDESK' });
    expect(row).toMatchObject({ visibility: 'private', active: true, project_id: owner.projectId });
    expect(JSON.stringify(row)).not.toContain('token-zoe');

    const listed = await app.get(SERVERS, asOwner);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({
        app_name: 'HELPDESK',
        url: server.url,
        visibility: 'private',
        security_schemes: ['http_bearer'],
        tool_count: 2,
        sync_error: null,
        protocol_version: '2026-07-28',
      }),
    ]);
    const one = await app.get(`${SERVERS}/HELPDESK`, asOwner);
    expect(one.body).toEqual(listed.body[0]);

    const audit = await app.dataSource
      .getRepository(AuditEventEntity)
      .findOneByOrFail({ action: 'mcp_server.added', resource_id: 'HELPDESK' });
    expect(audit.project_id).toBe(owner.projectId);
  });

  it('the owner sees, configures, links and runs it over REST and MCP', async () => {
    const described = await app.get('/v1/apps/HELPDESK', asOwner);
    expect(described.status).toBe(200);
    expect((described.body.functions as { name: string }[]).map((fn) => fn.name).sort()).toEqual([
      'HELPDESK__CLOSE_TICKET',
      'HELPDESK__LIST_TICKETS',
    ]);
    const listed = await app.get('/v1/apps', { ...asOwner, query: { app_names: 'HELPDESK' } });
    expect((listed.body as { name: string }[]).map((found) => found.name)).toEqual(['HELPDESK']);
    const definition = await app.get('/v1/functions/HELPDESK__LIST_TICKETS/definition', asOwner);
    expect(definition.status).toBe(200);

    const configured = await app.post(
      '/v1/app-configurations',
      { app_name: 'HELPDESK', security_scheme: 'http_bearer' },
      asOwner,
    );
    expect(configured.status, configured.text).toBe(200);
    const linked = await app.post(
      '/v1/linked-accounts/http-bearer',
      { app_name: 'HELPDESK', linked_account_owner_id: 'zoe', token: 'token-zoe' },
      asOwner,
    );
    expect(linked.status, linked.text).toBe(200);
    const executed = await app.post(
      '/v1/functions/HELPDESK__LIST_TICKETS/execute',
      { function_input: { limit: 5 }, linked_account_owner_id: 'zoe' },
      asOwner,
    );
    expect(executed.body).toEqual({ success: true, data: { tool: 'list_tickets', user: 'zoe' }, error: null });

    const token = await app.post('/v1/mcp/tokens', { linked_account_owner_id: 'zoe' }, asOwner);
    expect(token.status, token.text).toBe(201);
    const { client } = await connectMcp(app.url, {
      headers: { authorization: `Bearer ${token.body.token}` },
      query: { mode: 'direct' },
    });
    try {
      const { tools: offered } = await client.listTools();
      expect(offered.map((tool) => tool.name)).toContain('HELPDESK__LIST_TICKETS');
      const result = await client.callTool({ name: 'HELPDESK__LIST_TICKETS', arguments: {} });
      expect(result.structuredContent).toMatchObject({ success: true, data: { tool: 'list_tickets', user: 'zoe' } });
    } finally {
      await client.close();
    }
  });

  it('is invisible to every other project: not listed, described, configured, run or managed', async () => {
    expect((await app.get('/v1/apps/HELPDESK', asOther)).status).toBe(404);
    const apps = await app.get('/v1/apps', { ...asOther, query: { app_names: 'HELPDESK' } });
    expect(apps.body).toEqual([]);
    const searched = await app.get('/v1/apps/search', { ...asOther, query: { limit: 100 } });
    expect((searched.body as { name: string }[]).map((found) => found.name)).not.toContain('HELPDESK');
    const functions = await app.get('/v1/functions', { ...asOther, query: { app_names: 'HELPDESK' } });
    expect(functions.body).toEqual([]);
    expect((await app.get('/v1/functions/HELPDESK__LIST_TICKETS/definition', asOther)).status).toBe(404);
    const configured = await app.post(
      '/v1/app-configurations',
      { app_name: 'HELPDESK', security_scheme: 'http_bearer' },
      asOther,
    );
    expect(configured.status).toBe(404);
    const executed = await app.post(
      '/v1/functions/HELPDESK__LIST_TICKETS/execute',
      { function_input: {}, linked_account_owner_id: 'zoe' },
      asOther,
    );
    expect(executed.status).toBe(404);
    expect(executed.body.error).toContain('HELPDESK__LIST_TICKETS');

    expect(await app.get(SERVERS, asOther).then((res) => res.body)).toEqual([]);
    expect((await app.get(`${SERVERS}/HELPDESK`, asOther)).status).toBe(404);
    expect((await app.post(`${SERVERS}/HELPDESK/sync`, {}, asOther)).status).toBe(404);
    expect((await app.delete(`${SERVERS}/HELPDESK`, asOther)).status).toBe(404);
  });

  it('refuses a name already taken, by a project or by the catalogue, with 409', async () => {
    const again = await app.post(SERVERS, { url: server.url, app_name: 'HELPDESK', token: 'token-zoe' }, asOther);
    expect(again.status).toBe(409);
    expect(again.body.error).toContain('HELPDESK');
    await expect(
      app.app.get(McpServersService).add(server.url, { appName: 'HELPDESK', token: 'token-zoe' }),
    ).rejects.toThrow(/taken/);
    // The owner's app is as it was.
    const row = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'HELPDESK' });
    expect(row.project_id).toBe(owner.projectId);

    // Two projects taking one name at the same moment: one app, one 409.
    const body = { url: server.url, app_name: 'RACED', token: 'token-zoe' };
    const raced = await Promise.all([app.post(SERVERS, body, asOwner), app.post(SERVERS, body, asOther)]);
    expect(raced.map((res) => res.status).sort()).toEqual([201, 409]);
    const winner = raced[0].status === 201 ? owner : other;
    const racedRow = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'RACED' });
    expect(racedRow.project_id).toBe(winner.projectId);
    expect((await app.delete(`${SERVERS}/RACED`, raced[0].status === 201 ? asOwner : asOther)).status).toBe(200);
  });

  it('the catalogue cannot write a project’s app: an import naming it is refused and the app is untouched', async () => {
    const before = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'HELPDESK' });
    const report = await app.app.get(OpenApiImportService).importSources(['test/fixtures/openapi/petstore-3.0.yaml'], {
      secrets: {},
      appName: 'HELPDESK',
    });
    expect(report.refused).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/HELPDESK is a project's own app/) }),
    ]);
    const after = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'HELPDESK' });
    expect(after).toMatchObject({
      project_id: owner.projectId,
      description: before.description,
      content_hash: before.content_hash,
    });
    const functions = await app.get('/v1/functions?app_names=HELPDESK', asOwner);
    expect((functions.body as { name: string }[]).map((fn) => fn.name).sort()).toEqual([
      'HELPDESK__CLOSE_TICKET',
      'HELPDESK__LIST_TICKETS',
    ]);
  });

  it('refuses bad input naming the field and the reason, never a 500', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 422, 'url'],
      [{ url: 'ftp://example.com/mcp' }, 422, 'url'],
      [{ url: server.url, app_name: 'lower case' }, 422, 'app_name'],
      [{ url: server.url, auth: 'basic' }, 422, 'auth'],
      [{ url: server.url, auth: 'api_key' }, 400, 'api_key_header'],
      [{ url: server.url, auth: 'bearer', client_id: 'x' }, 400, 'client_id'],
      [{ url: server.url, api_key_header: 'bad header' }, 422, 'api_key_header'],
      [{ url: 'http://127.0.0.1:9/mcp', app_name: 'NOWHERE' }, 400, '127.0.0.1'],
    ];
    for (const [body, status, named] of cases) {
      const res = await app.post(SERVERS, body, asOwner);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status);
      expect(res.text).toContain(named);
    }
    // A failed add leaves no name taken.
    expect(await app.dataSource.getRepository(AppEntity).findOneBy({ name: 'NOWHERE' })).toBeNull();
    expect((await app.post(SERVERS, { url: server.url }, { apiKey: 'not-a-key' })).status).toBe(401);
  });

  it('syncs: a new tool is added, a vanished one deactivated', async () => {
    tools = [TOOLS[0], { name: 'reopen_ticket', description: 'Reopens a ticket.', inputSchema: { type: 'object' } }];
    const synced = await app.post(`${SERVERS}/HELPDESK/sync`, { token: 'token-zoe' }, asOwner);
    expect(synced.status, synced.text).toBe(200);
    expect(synced.body.functions).toMatchObject({
      added: ['HELPDESK__REOPEN_TICKET'],
      deactivated: ['HELPDESK__CLOSE_TICKET'],
    });
    const functions = await app.get('/v1/functions', { ...asOwner, query: { app_names: 'HELPDESK' } });
    expect((functions.body as { name: string }[]).map((fn) => fn.name).sort()).toEqual([
      'HELPDESK__LIST_TICKETS',
      'HELPDESK__REOPEN_TICKET',
    ]);
    expect((await app.get(`${SERVERS}/HELPDESK`, asOwner)).body.tool_count).toBe(2);
  });

  it('a tool-list change heard on the owner’s connection syncs the owner’s app, never another project’s', async () => {
    let names = ['read_board'];
    const board = await McpTestServer.start({
      era: 'modern',
      listChanged: true,
      tools: () => names.map((name) => ({ name, description: `Does ${name}.`, inputSchema: { type: 'object' } })),
      call: (name) => ({ content: [{ type: 'text', text: `${name} done` }] }),
    });
    try {
      for (const [apiKey, appName] of [
        [owner.apiKey, 'BOARD_MINE'],
        [other.apiKey, 'BOARD_THEIRS'],
      ]) {
        expect((await app.post(SERVERS, { url: board.url, app_name: appName }, { apiKey })).status).toBe(201);
        expect(
          (await app.post('/v1/app-configurations', { app_name: appName, security_scheme: 'no_auth' }, { apiKey }))
            .status,
        ).toBe(200);
      }
      const linked = await app.post(
        '/v1/linked-accounts/no-auth',
        { app_name: 'BOARD_MINE', linked_account_owner_id: 'zoe' },
        asOwner,
      );
      expect(linked.status, linked.text).toBe(200);
      const run = await app.post(
        '/v1/functions/BOARD_MINE__READ_BOARD/execute',
        { function_input: {}, linked_account_owner_id: 'zoe' },
        asOwner,
      );
      expect(run.body).toMatchObject({ success: true });
      await vi.waitFor(() => expect(board.received.some((r) => r.rpc === 'subscriptions/listen')).toBe(true), {
        timeout: 10_000,
        interval: 50,
      });
      names = ['read_board', 'pin_card'];
      await board.announceToolsChanged();
      const synced = (appName: string) =>
        app.dataSource.getRepository(AuditEventEntity).findBy({ action: 'mcp_server.synced', resource_id: appName });
      await vi.waitFor(async () => expect(await synced('BOARD_MINE')).toHaveLength(1), {
        timeout: 15_000,
        interval: 200,
      });
      const mine = await app.get('/v1/functions', { ...asOwner, query: { app_names: 'BOARD_MINE' } });
      expect((mine.body as { name: string }[]).map((fn) => fn.name).sort()).toEqual([
        'BOARD_MINE__PIN_CARD',
        'BOARD_MINE__READ_BOARD',
      ]);
      // The other project's app at the same server was not read with the owner's connection.
      expect(await synced('BOARD_THEIRS')).toEqual([]);
      const theirs = await app.get('/v1/functions', { ...asOther, query: { app_names: 'BOARD_THEIRS' } });
      expect((theirs.body as { name: string }[]).map((fn) => fn.name)).toEqual(['BOARD_THEIRS__READ_BOARD']);
    } finally {
      await board.close();
      await app.delete(`${SERVERS}/BOARD_MINE`, asOwner);
      await app.delete(`${SERVERS}/BOARD_THEIRS`, asOther);
    }
  });

  it('removes the app with its configuration and accounts; the execution log keeps its records', async () => {
    const removed = await app.delete(`${SERVERS}/HELPDESK`, asOwner);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({ app_name: 'HELPDESK', linked_accounts_deleted: 1 });
    expect(await app.dataSource.getRepository(AppEntity).findOneBy({ name: 'HELPDESK' })).toBeNull();
    expect((await app.get('/v1/apps/HELPDESK', asOwner)).status).toBe(404);
    expect((await app.get('/v1/app-configurations/HELPDESK', asOwner)).status).toBe(404);
    const executed = await app.post(
      '/v1/functions/HELPDESK__LIST_TICKETS/execute',
      { function_input: {}, linked_account_owner_id: 'zoe' },
      asOwner,
    );
    expect(executed.status).toBe(404);
    expect(await app.get(SERVERS, asOwner).then((res) => res.body)).toEqual([]);
    const [logged] = await app.dataSource.query<{ count: string }[]>(
      `SELECT count(*) AS count FROM executions WHERE function_name = 'HELPDESK__LIST_TICKETS'`,
    );
    expect(Number(logged.count)).toBeGreaterThan(0);
    const audit = await app.dataSource
      .getRepository(AuditEventEntity)
      .findOneByOrFail({ action: 'mcp_server.removed', resource_id: 'HELPDESK' });
    expect(audit.project_id).toBe(owner.projectId);
    // The name is free again.
    const readded = await app.post(SERVERS, { url: server.url, app_name: 'HELPDESK', token: 'token-zoe' }, asOther);
    expect(readded.status, readded.text).toBe(201);
  });
});
