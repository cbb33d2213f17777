import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { TOOL_NAME_MAX, toolName } from '../../../src/mcp/tool-names.js';
import { executionScenario, insertConfiguration, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';
import { newOAuth2App } from '../oauth2/linking.js';
import { type ConnectOptions, connectMcp, type McpRevision, postMcp, postModern, REVISIONS } from './mcp-client.js';

const node = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  visible: Object.keys(properties),
  additionalProperties: false,
});

describe.each(REVISIONS)(
  '/v1/mcp owner-scoped tokens, direct mode and account linking, protocol %s',
  (revision: McpRevision) => {
    let app: TestApp;
    let upstream: Upstream;
    let projectId: string;
    let apiKey: string;
    let scenario: Scenario;
    let second: Scenario;

    const restFunction = (method: string, extra: Partial<FunctionEntity> = {}): Partial<FunctionEntity> => ({
      protocol: 'rest',
      protocol_data: { method, path: '/items', server_url: `${upstream.url}/api` },
      parameters: node({ body: node({ title: { type: 'string' } }, ['title']) }),
      ...extra,
    });

    /** The revision's own SDK client. */
    const connect = (options: ConnectOptions = {}) => connectMcp(app.url, { ...options, revision });
    const createToken = (body: Record<string, unknown>) => app.post('/v1/mcp/tokens', body, { apiKey });
    const text = (result: Record<string, unknown>) => (result.content as { text: string }[])[0].text;

    beforeAll(async () => {
      app = await TestApp.start();
      upstream = await Upstream.start();
      ({ projectId, apiKey } = await app.ctx.newProject());
      scenario = await executionScenario(app, { projectId, scheme: 'no_auth', function: restFunction('POST') });
      second = await executionScenario(app, {
        projectId,
        scheme: 'no_auth',
        function: restFunction('DELETE'),
        account: { linked_account_owner_id: scenario.owner },
      });
    });

    afterAll(async () => {
      await upstream.close();
      await app.close();
    });

    beforeEach(() => upstream.reset());

    describe('POST /v1/mcp/tokens and DELETE /v1/mcp/tokens/{id}', () => {
      it('creates a token shown once, with its URL and expiry (30 days by default)', async () => {
        const res = await createToken({ linked_account_owner_id: scenario.owner });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ linked_account_owner_id: scenario.owner, apps: null });
        expect(res.body.token).toMatch(/^pbm_[\w-]{43}$/);
        expect(res.body.url).toMatch(/\/v1\/mcp$/);
        const days = (new Date(res.body.expires_at).getTime() - Date.now()) / 86_400_000;
        expect(days).toBeGreaterThan(29.9);
        expect(days).toBeLessThan(30.1);
        const stored: { token_hash: string }[] = await app.dataSource.query(
          'SELECT token_hash FROM mcp_tokens WHERE id = $1',
          [res.body.id],
        );
        expect(stored[0].token_hash).not.toContain(res.body.token);
      });

      it('refuses bad input with a 422 naming the field, and apps the project did not configure', async () => {
        const missing = await createToken({});
        expect(missing.status).toBe(422);
        expect(missing.body.detail[0].loc).toEqual(['body', 'linked_account_owner_id']);
        const tooLong = await createToken({ linked_account_owner_id: 'u', expires_in_seconds: 400 * 86_400 });
        expect(tooLong.status).toBe(422);
        expect(tooLong.body.detail[0].loc).toEqual(['body', 'expires_in_seconds']);
        const unknownApp = await createToken({ linked_account_owner_id: 'u', apps: ['NOT_CONFIGURED'] });
        expect(unknownApp.status).toBe(404);
        expect(unknownApp.body.error).toContain('NOT_CONFIGURED');
        expect((await app.post('/v1/mcp/tokens', { linked_account_owner_id: 'u' }, { apiKey: null })).status).toBe(401);
      });

      it('acts for its owner only: a request cannot name another owner', async () => {
        const { body } = await createToken({ linked_account_owner_id: scenario.owner });
        const { client } = await connect({ headers: { authorization: `Bearer ${body.token}` } });
        const run = await client.callTool({
          name: 'execute_function',
          arguments: { function_name: scenario.fn.name, function_input: { body: { title: 'hi' } } },
        });
        expect(run.structuredContent).toEqual({ success: true, data: { ok: true } });
        expect(upstream.last.body).toBe('{"title":"hi"}');
        await client.close();
        for (const headers of [
          { authorization: `Bearer ${body.token}`, 'x-linked-account-owner-id': 'someone-else' },
        ]) {
          const res = await postMcp(app.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
          expect(res.status).toBe(403);
        }
        const viaQuery = await postMcp(
          app.url,
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { authorization: `Bearer ${body.token}` },
          '/v1/mcp?linked_account_owner_id=someone-else',
        );
        expect(viaQuery.status).toBe(403);
        const rows = await app.get('/v1/executions', { apiKey, query: { limit: 1 } });
        expect(rows.body[0]).toMatchObject({
          source: 'mcp',
          mcp_token_id: body.id,
          linked_account_owner_id: scenario.owner,
        });
      });

      it('is refused once revoked (401), and revoking twice or another project’s token is 404', async () => {
        const { body } = await createToken({ linked_account_owner_id: scenario.owner });
        const { client } = await connect({ headers: { authorization: `Bearer ${body.token}` } });
        expect((await app.delete(`/v1/mcp/tokens/${body.id}`, { apiKey })).status).toBe(204);
        await expect(client.listTools()).rejects.toThrow();
        const res = await postMcp(
          app.url,
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          {
            authorization: `Bearer ${body.token}`,
          },
        );
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
        expect((await app.delete(`/v1/mcp/tokens/${body.id}`, { apiKey })).status).toBe(404);
        const other = await app.ctx.newProject('other');
        const fresh = await createToken({ linked_account_owner_id: 'x' });
        expect((await app.delete(`/v1/mcp/tokens/${fresh.body.id}`, { apiKey: other.apiKey })).status).toBe(404);
        expect((await app.delete('/v1/mcp/tokens/not-a-uuid', { apiKey })).status).toBe(422);
      });

      it('honours its app restriction in search, definitions, execution and direct listing', async () => {
        const { body } = await createToken({ linked_account_owner_id: scenario.owner, apps: [scenario.app.name] });
        const { client } = await connect({ headers: { authorization: `Bearer ${body.token}` } });
        const blocked = await client.callTool({
          name: 'execute_function',
          arguments: { function_name: second.fn.name, function_input: {} },
        });
        expect(blocked.isError).toBe(true);
        expect(text(blocked)).toBe(`Function ${second.fn.name} not found`);
        expect(upstream.received).toHaveLength(0);
        const definition = await client.callTool({
          name: 'get_function_definition',
          arguments: { function_name: second.fn.name },
        });
        expect(definition.isError).toBe(true);
        const search = await client.callTool({ name: 'search_functions', arguments: { intent: 'items' } });
        const names = (search.structuredContent as { results: { name: string }[] }).results.map((r) => r.name);
        expect(names).toEqual([scenario.fn.name]);
        await client.close();
        const direct = await connect({
          headers: { authorization: `Bearer ${body.token}` },
          query: { mode: 'direct', apps: `${scenario.app.name},${second.app.name}` },
        });
        expect((await direct.client.listTools()).tools.map((tool) => tool.name)).toEqual([scenario.fn.name]);
        await direct.client.close();
      });
    });

    describe('direct mode', () => {
      it('lists one tool per enabled function with the definition schema and annotations from the method', async () => {
        const { client } = await connect({
          headers: { 'x-api-key': apiKey, 'x-linked-account-owner-id': scenario.owner },
          query: { mode: 'direct' },
        });
        const { tools } = await client.listTools();
        const byName = new Map(tools.map((tool) => [tool.name, tool]));
        const definition = await app.get(`/v1/functions/${scenario.fn.name}/definition`, {
          apiKey,
          query: { format: 'anthropic' },
        });
        expect(byName.get(scenario.fn.name)).toEqual({
          name: scenario.fn.name,
          title: scenario.fn.name,
          description: scenario.fn.description,
          inputSchema: definition.body.input_schema,
          annotations: { title: scenario.fn.name, openWorldHint: true },
        });
        expect(byName.get(second.fn.name)?.annotations).toEqual({
          title: second.fn.name,
          openWorldHint: true,
          destructiveHint: true,
          idempotentHint: true,
        });
        const run = await client.callTool({ name: scenario.fn.name, arguments: { body: { title: 'direct' } } });
        expect(run.structuredContent).toEqual({ success: true, data: { ok: true } });
        expect(upstream.last).toMatchObject({ method: 'POST', url: '/api/items', body: '{"title":"direct"}' });
        await expect(client.callTool({ name: 'NOT_A_TOOL_abcdef12', arguments: {} })).rejects.toMatchObject({
          code: -32602,
        });
        await client.close();
      });

      it('pages with cursors (at most 100 per page), shortens long names to 48 characters and maps them back', async () => {
        const bulk = await app.ctx.newApp({ security_schemes: { no_auth: {} } });
        const longName = `${bulk.name}__${'VERY_LONG_FUNCTION_NAME_'.repeat(3)}GET`;
        await app.ctx.newFunction(bulk.name, { ...restFunction('GET'), name: longName });
        for (let i = 0; i < 150; i++) {
          await app.ctx.newFunction(bulk.name, restFunction(i % 2 ? 'GET' : 'PUT'));
        }
        await insertConfiguration(app, projectId, bulk.name);
        await app.dataSource.query(
          `INSERT INTO linked_accounts (id, project_id, app_name, linked_account_owner_id, security_scheme, credentials, enabled)
         SELECT gen_random_uuid(), project_id, $1, linked_account_owner_id, security_scheme, credentials, true
         FROM linked_accounts WHERE id = $2`,
          [bulk.name, scenario.account.id],
        );
        const { client } = await connect({
          headers: { 'x-api-key': apiKey, 'x-linked-account-owner-id': scenario.owner },
          query: { mode: 'direct', apps: bulk.name },
        });
        const pages: number[] = [];
        const names: string[] = [];
        let cursor: string | undefined;
        const headers = { 'x-api-key': apiKey, 'x-linked-account-owner-id': scenario.owner };
        if (revision === '2026-07-28') {
          // Asked for the first page, the v2 client walks every page itself.
          const all = await client.listTools();
          expect(all.tools).toHaveLength(151);
          expect(all.nextCursor).toBeUndefined();
        }
        do {
          const page =
            cursor === undefined && revision === '2026-07-28'
              ? ((await postModern(app.url, 'tools/list', {}, headers, { mode: 'direct', apps: bulk.name })).body
                  .result as { tools: { name: string }[]; nextCursor?: string })
              : await client.listTools(cursor === undefined ? {} : { cursor });
          pages.push(page.tools.length);
          names.push(...page.tools.map((tool) => tool.name));
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        expect(pages).toEqual([100, 51]);
        expect(new Set(names).size).toBe(151);
        expect(Math.max(...names.map((name) => name.length))).toBeLessThanOrEqual(TOOL_NAME_MAX);
        const short = toolName(longName);
        expect(longName.length).toBeGreaterThan(TOOL_NAME_MAX);
        expect(short).toHaveLength(TOOL_NAME_MAX);
        expect(names).toContain(short);
        const run = await client.callTool({ name: short, arguments: { body: { title: 'long' } } });
        expect(run.structuredContent).toEqual({ success: true, data: { ok: true } });
        expect(upstream.last).toMatchObject({ method: 'GET' });
        const rows = await app.get('/v1/executions', { apiKey, query: { limit: 1 } });
        expect(rows.body[0]).toMatchObject({ function_name: longName, source: 'mcp' });
        await expect(client.listTools({ cursor: 'garbage' })).rejects.toMatchObject({ code: -32602 });
        await client.close();
      });
    });

    describe('linking an account inside the conversation', () => {
      const oauthScheme = {
        location: 'header',
        name: 'Authorization',
        prefix: 'Bearer',
        client_id: 'app-client',
        scope: 'read',
        authorize_url: 'https://auth.example.com/oauth/authorize',
        access_token_url: 'https://auth.example.com/oauth/token',
        refresh_token_url: 'https://auth.example.com/oauth/token',
      };

      // 2026-07-28's input-required round trip is in mcp-modern.e2e-spec.ts.
      it.runIf(revision === '2025-11-25')(
        'answers URL elicitation (-32042) with a connect link when the client declared it',
        async () => {
          const row = await newOAuth2App(app, apiKey, { scheme: oauthScheme, appClientSecret: 'secret' });
          const fn = await app.ctx.newFunction(row.name, restFunction('GET'));
          const { client } = await connect({
            headers: { 'x-api-key': apiKey, 'x-linked-account-owner-id': 'new-user' },
            capabilities: { elicitation: { url: {} } },
          });
          const error = await client
            .callTool({ name: 'execute_function', arguments: { function_name: fn.name, function_input: {} } })
            .then(
              () => null,
              (thrown: unknown) => thrown,
            );
          expect(error).toBeInstanceOf(UrlElicitationRequiredError);
          const elicitation = (error as UrlElicitationRequiredError).elicitations[0];
          expect(elicitation.mode).toBe('url');
          const url = new URL(elicitation.url);
          // PUBLIC_BASE_URL (its default here) + the connect page's path.
          expect(url.origin).toBe('http://127.0.0.1:8000');
          const id = url.pathname.match(/^\/connect\/([0-9a-f-]{36})$/)?.[1];
          expect(id, elicitation.url).toBeDefined();
          expect(url.searchParams.get('token')).toBeTruthy();
          expect(elicitation.url).not.toContain('new-user');
          expect(elicitation.url).not.toContain(apiKey);
          // The link is a real pending connect link of this project, for this app and owner.
          const link = await app.get(`/v1/linked-accounts/connect-links/${id}`, { apiKey });
          expect(link.body).toMatchObject({
            app_name: row.name,
            linked_account_owner_id: 'new-user',
            status: 'pending',
          });
          await client.close();
        },
      );

      it('puts a connect link in the tool error when the client cannot elicit, for every scheme', async () => {
        const row = await newOAuth2App(app, apiKey, { scheme: oauthScheme, appClientSecret: 'secret' });
        const fn = await app.ctx.newFunction(row.name, restFunction('GET'));
        const { client } = await connect({
          headers: { 'x-api-key': apiKey, 'x-linked-account-owner-id': 'new-user' },
        });
        const result = await client.callTool({
          name: 'execute_function',
          arguments: { function_name: fn.name, function_input: {} },
        });
        expect(result.isError).toBe(true);
        expect(text(result)).toMatch(
          new RegExp(`^No linked account of app ${row.name} for owner new-user in this project\\. Open this address`),
        );
        expect(text(result)).toContain('http://127.0.0.1:8000/connect/');
        const apiKeyApp = await executionScenario(app, {
          projectId,
          scheme: 'api_key',
          settings: { location: 'header', name: 'X-Key' },
          function: restFunction('GET'),
          credentials: { secret_key: 'k' },
        });
        const other = await client.callTool({
          name: 'execute_function',
          arguments: { function_name: apiKeyApp.fn.name, function_input: {} },
        });
        expect(other.isError).toBe(true);
        expect(text(other)).toMatch(
          new RegExp(`Open this address to connect your ${apiKeyApp.app.name} account.*http://127.0.0.1:8000/connect/`),
        );
        await client.close();
      });

      it('asks for the connect link as its MCP token, which the audit log names', async () => {
        const row = await newOAuth2App(app, apiKey, { scheme: oauthScheme, appClientSecret: 'secret' });
        const fn = await app.ctx.newFunction(row.name, restFunction('GET'));
        const { body } = await createToken({ linked_account_owner_id: 'audited-user' });
        const { client } = await connect({ headers: { authorization: `Bearer ${body.token}` } });
        const result = await client.callTool({
          name: 'execute_function',
          arguments: { function_name: fn.name, function_input: {} },
        });
        expect(result.isError).toBe(true);
        const id = /\/connect\/([0-9a-f-]{36})/.exec(text(result))?.[1];
        expect(id, text(result)).toBeDefined();
        const events = await app.get('/v1/audit-events', {
          query: { action: 'connect_link.created', resource_id: id as string },
          apiKey,
        });
        expect(events.body).toMatchObject([
          { actor_type: 'mcp_token', actor_id: body.id, after: { linked_account_owner_id: 'audited-user' } },
        ]);
        await client.close();
      });
    });
  },
);
