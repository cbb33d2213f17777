import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { executionScenario, insertConfiguration, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';
import { type ConnectOptions, connectMcp, type McpRevision, postMcp, REVISIONS } from './mcp-client.js';

const node = (properties: Record<string, unknown>, required: string[] = [], visible = Object.keys(properties)) => ({
  type: 'object',
  properties,
  required,
  visible,
  additionalProperties: false,
});

describe.each(REVISIONS)(
  '/v1/mcp unified mode (SDK client over Streamable HTTP), protocol %s',
  (revision: McpRevision) => {
    let app: TestApp;
    let upstream: Upstream;
    let projectId: string;
    let apiKey: string;
    let scenario: Scenario;

    const searchFunction = (): Partial<FunctionEntity> => ({
      protocol: 'rest',
      protocol_data: { method: 'GET', path: '/search', server_url: `${upstream.url}/api` },
      description: 'Search the weather archive for a city',
      parameters: node({ query: node({ city: { type: 'string', description: 'City name' } }, ['city']) }, ['query']),
    });

    /** The revision's own SDK client. */
    const connect = (options: ConnectOptions = {}) => connectMcp(app.url, { ...options, revision });
    const asOwner = () => ({ headers: { 'x-api-key': apiKey, 'x-linked-account-owner-id': scenario.owner } });

    beforeAll(async () => {
      app = await TestApp.start();
      upstream = await Upstream.start();
      ({ projectId, apiKey } = await app.ctx.newProject());
      scenario = await executionScenario(app, { projectId, scheme: 'no_auth', function: searchFunction() });
    });

    afterAll(async () => {
      await upstream.close();
      await app.close();
    });

    beforeEach(() => upstream.reset());

    it('identifies itself and lists the three meta tools', async () => {
      const { client } = await connect(asOwner());
      expect(client.getServerVersion()?.name).toBe('patchbay');
      const { tools, nextCursor } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        'search_functions',
        'get_function_definition',
        'execute_function',
      ]);
      expect(nextCursor).toBeUndefined();
      await client.close();
    });

    it.runIf(revision === '2025-11-25')('negotiates an older protocol version a client asks for', async () => {
      const res = await postMcp(
        app.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
        },
        { 'x-api-key': apiKey },
      );
      expect(res.status).toBe(200);
      expect(res.body.result.protocolVersion).toBe('2025-03-26');
      expect(res.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
      const latest = await postMcp(
        app.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'odd', version: '1' } },
        },
        { 'x-api-key': apiKey },
      );
      expect(latest.body.result.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    });

    it('executes a function: the exact request reaches the upstream, the result is structured and text', async () => {
      const { client } = await connect(asOwner());
      upstream.respondJson(200, { temperature: 21 });
      const result = await client.callTool({
        name: 'execute_function',
        arguments: { function_name: scenario.fn.name, function_input: { query: { city: 'Oslo' } } },
      });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ success: true, data: { temperature: 21 } });
      expect(JSON.parse((result.content as { text: string }[])[0].text)).toEqual({
        success: true,
        data: { temperature: 21 },
      });
      expect(upstream.received).toHaveLength(1);
      expect(upstream.last.method).toBe('GET');
      expect(upstream.last.url).toBe('/api/search?city=Oslo');
      expect(upstream.last.body).toBe('');
      await client.close();
    });

    it('also accepts the API key as a bearer token and the owner in the query', async () => {
      const { client } = await connect({
        headers: { authorization: `Bearer ${apiKey}` },
        query: { linked_account_owner_id: scenario.owner },
      });
      const result = await client.callTool({
        name: 'execute_function',
        arguments: { function_name: scenario.fn.name, function_input: { query: { city: 'Rome' } } },
      });
      expect(result.structuredContent).toEqual({ success: true, data: { ok: true } });
      expect(upstream.last.url).toBe('/api/search?city=Rome');
      await client.close();
    });

    it('searches with input schemas and whether the owner has a linked account', async () => {
      const { client } = await connect(asOwner());
      const result = await client.callTool({ name: 'search_functions', arguments: { intent: 'weather in a city' } });
      const { results } = result.structuredContent as { results: Record<string, unknown>[] };
      expect(results).toHaveLength(1);
      const definition = await app.get(`/v1/functions/${scenario.fn.name}/definition`, {
        query: { format: 'anthropic' },
      });
      expect(results[0]).toEqual({
        name: scenario.fn.name,
        app_name: scenario.app.name,
        description: scenario.fn.description,
        input_schema: definition.body.input_schema,
        linked_account: true,
      });
      await client.close();
    });

    it('gives a definition equal to the REST one', async () => {
      const { client } = await connect(asOwner());
      const result = await client.callTool({
        name: 'get_function_definition',
        arguments: { function_name: scenario.fn.name },
      });
      const rest = await app.get(`/v1/functions/${scenario.fn.name}/definition`, { query: { format: 'anthropic' } });
      expect(result.structuredContent).toEqual(rest.body);
      await client.close();
    });

    describe('pipeline failures are tool errors with the REST message', () => {
      const restError = async (functionName: string, input: unknown, owner = scenario.owner) => {
        const res = await app.post(
          `/v1/functions/${functionName}/execute`,
          { function_input: input, linked_account_owner_id: owner },
          { apiKey },
        );
        return res.body.error as string;
      };

      const mcpError = async (functionName: string, input: unknown, owner = scenario.owner) => {
        const { client } = await connect({
          headers: { 'x-api-key': apiKey, 'x-linked-account-owner-id': owner },
        });
        const result = await client.callTool({
          name: 'execute_function',
          arguments: { function_name: functionName, function_input: input },
        });
        await client.close();
        expect(result.isError).toBe(true);
        return (result.content as { text: string }[])[0].text;
      };

      it('unknown function', async () => {
        expect(await mcpError('NOPE__NOTHING', {})).toBe(await restError('NOPE__NOTHING', {}));
      });

      it('invalid input, with the field named', async () => {
        const message = await mcpError(scenario.fn.name, { query: {} });
        expect(message).toBe(await restError(scenario.fn.name, { query: {} }));
        expect(message).toContain('city');
      });

      it('disabled configuration and function not enabled', async () => {
        const other = await app.ctx.newApp({ security_schemes: { no_auth: {} } });
        const fn = await app.ctx.newFunction(other.name, searchFunction());
        const second = await app.ctx.newFunction(other.name, searchFunction());
        await insertConfiguration(app, projectId, other.name, { enabled: false });
        const disabled = await mcpError(fn.name, { query: { city: 'x' } });
        expect(disabled).toBe(await restError(fn.name, { query: { city: 'x' } }));
        expect(disabled).toContain('is disabled');
        await app.dataSource.query(
          `UPDATE app_configurations SET enabled = true, all_functions_enabled = false, enabled_functions = $2 WHERE app_name = $1`,
          [other.name, [fn.name]],
        );
        await new Promise((resolve) => setTimeout(resolve, 1200));
        const notEnabled = await mcpError(second.name, { query: { city: 'x' } });
        expect(notEnabled).toBe(await restError(second.name, { query: { city: 'x' } }));
        expect(notEnabled).toContain('is not enabled');
      });

      it('a run that fails (upstream 500) is a tool error with the run error', async () => {
        upstream.respondJson(500, { message: 'boom' });
        const message = await mcpError(scenario.fn.name, { query: { city: 'x' } });
        expect(message).toBe(await restError(scenario.fn.name, { query: { city: 'x' } }));
      });

      it('no owner: execute says how to set one; search still works', async () => {
        const { client } = await connect({ headers: { 'x-api-key': apiKey } });
        const result = await client.callTool({
          name: 'execute_function',
          arguments: { function_name: scenario.fn.name, function_input: { query: { city: 'x' } } },
        });
        expect(result.isError).toBe(true);
        expect((result.content as { text: string }[])[0].text).toContain('X-Linked-Account-Owner-Id');
        const search = await client.callTool({ name: 'search_functions', arguments: { intent: 'weather' } });
        expect(search.isError).toBeFalsy();
        expect((search.structuredContent as { results: { linked_account: unknown }[] }).results[0].linked_account).toBe(
          null,
        );
        await client.close();
      });
    });

    it('answers an unknown tool with a JSON-RPC error, and arguments that do not fit a tool with a tool error (SEP-1303)', async () => {
      const { client } = await connect(asOwner());
      await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      // The model reads a tool error and can call again with better arguments; nothing runs meanwhile.
      const calls: [string, Record<string, unknown>, string][] = [
        ['execute_function', { function_input: {} }, 'function_name is required and must be a non-empty string'],
        [
          'execute_function',
          { function_name: scenario.fn.name, function_input: 'x' },
          'function_input must be an object',
        ],
        [
          'get_function_definition',
          { function_name: '  ' },
          'function_name is required and must be a non-empty string',
        ],
        ['search_functions', {}, 'intent is required and must be a non-empty string'],
        ['search_functions', { intent: 'weather', app_names: 'WEATHER' }, 'app_names must be an array of strings'],
      ];
      for (const [name, args, message] of calls) {
        const result = await client.callTool({ name, arguments: args });
        expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: message }] });
      }
      expect(upstream.received).toHaveLength(0);
      await client.close();
    });

    it('bounds large results with a truncation marker and the full size', async () => {
      const { client } = await connect(asOwner());
      upstream.respondJson(200, { blob: 'x'.repeat(150_000) });
      const result = await client.callTool({
        name: 'execute_function',
        arguments: { function_name: scenario.fn.name, function_input: { query: { city: 'x' } } },
      });
      const text = (result.content as { text: string }[])[0].text;
      const size = JSON.stringify({ success: true, data: { blob: 'x'.repeat(150_000) } }).length;
      expect(text.endsWith(`\n[truncated: the result is ${size} bytes; only the first 100000 are shown]`)).toBe(true);
      expect(text.length).toBeLessThan(100_100);
      expect(result.structuredContent).toEqual({
        success: true,
        truncated: true,
        total_bytes: size,
        shown_bytes: 100000,
      });
      await client.close();
    });

    it('records MCP executions in GET /v1/executions, marked as coming from MCP', async () => {
      const { client } = await connect(asOwner());
      await client.callTool({
        name: 'execute_function',
        arguments: { function_name: scenario.fn.name, function_input: { query: { city: 'Lima' } } },
      });
      await client.close();
      await scenario.execute({ query: { city: 'Lima' } });
      const res = await app.get('/v1/executions', { apiKey, query: { limit: 2 } });
      expect(res.body.map((row: { source: string; mcp_token_id: unknown }) => [row.source, row.mcp_token_id])).toEqual([
        ['rest', null],
        ['mcp', null],
      ]);
    });

    describe.runIf(revision === '2025-11-25')('transport guards (initialize and sessions)', () => {
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      };

      it('401 with a JSON-RPC error and WWW-Authenticate without credentials or with a wrong key', async () => {
        const attempts: Record<string, string>[] = [
          {},
          { 'x-api-key': 'pb_wrong' },
          { authorization: 'Bearer pbm_wrong' },
        ];
        for (const headers of attempts) {
          const res = await postMcp(app.url, initialize, headers);
          expect(res.status).toBe(401);
          expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
          expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
        }
        await expect(connect()).rejects.toThrow();
      });

      it('403 for a foreign browser Origin; the service origin is accepted', async () => {
        const res = await postMcp(app.url, initialize, { 'x-api-key': apiKey, origin: 'https://evil.example' });
        expect(res.status).toBe(403);
        expect(res.body.error.message).toContain('https://evil.example');
        const own = await postMcp(app.url, initialize, { 'x-api-key': apiKey, origin: 'http://127.0.0.1:8000' });
        expect(own.status).toBe(200);
      });

      it('413 for a body over 4 MiB', async () => {
        // Many short strings: one string past the input limits would be refused (422) before the size.
        const big = JSON.stringify({
          ...initialize,
          params: { ...initialize.params, pad: Array.from({ length: 4200 }, () => 'x'.repeat(1000)) },
        });
        const res = await postMcp(app.url, big, { 'x-api-key': apiKey });
        expect(res.status).toBe(413);
        expect(res.body.error.message).toContain('4194304');
      });

      it('404 for an unknown session id', async () => {
        const res = await postMcp(
          app.url,
          { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          { 'x-api-key': apiKey, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' },
        );
        expect(res.status).toBe(404);
      });

      it('keeps a session for 7 days, ends it on DELETE, and answers 404 after either', async () => {
        const open = async () => {
          const res = await postMcp(app.url, initialize, { 'x-api-key': apiKey });
          return res.headers.get('mcp-session-id') as string;
        };
        const list = (session: string) =>
          postMcp(
            app.url,
            { jsonrpc: '2.0', id: 2, method: 'tools/list' },
            { 'x-api-key': apiKey, 'mcp-session-id': session },
          );
        const old = await open();
        expect((await list(old)).status).toBe(200);
        await app.dataSource.query(`UPDATE mcp_sessions SET created_at = now() - interval '8 days' WHERE id = $1`, [
          old,
        ]);
        expect((await list(old)).status).toBe(404);
        await open();
        const left: unknown[] = await app.dataSource.query('SELECT 1 FROM mcp_sessions WHERE id = $1', [old]);
        expect(left).toHaveLength(0);
        const ended = await open();
        const del = await fetch(`${app.url}/v1/mcp`, {
          method: 'DELETE',
          headers: { 'x-api-key': apiKey, 'mcp-session-id': ended },
        });
        expect(del.status).toBe(200);
        expect((await list(ended)).status).toBe(404);
        const other = await app.ctx.newProject('sessions elsewhere');
        const mine = await open();
        const foreign = await postMcp(
          app.url,
          { jsonrpc: '2.0', id: 2, method: 'tools/list' },
          { 'x-api-key': other.apiKey, 'mcp-session-id': mine },
        );
        expect(foreign.status).toBe(404);
      });

      it('serves a client that sends no session id statelessly', async () => {
        const res = await postMcp(app.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'x-api-key': apiKey });
        expect(res.status).toBe(200);
        expect(res.body.result.tools).toHaveLength(3);
      });
    });

    it('isolates projects: another project sees neither the functions nor the accounts', async () => {
      const other = await app.ctx.newProject('other');
      const { client } = await connect({
        headers: { 'x-api-key': other.apiKey, 'x-linked-account-owner-id': scenario.owner },
      });
      const search = await client.callTool({ name: 'search_functions', arguments: { intent: 'weather' } });
      expect((search.structuredContent as { results: unknown[] }).results).toEqual([]);
      const run = await client.callTool({
        name: 'execute_function',
        arguments: { function_name: scenario.fn.name, function_input: { query: { city: 'x' } } },
      });
      expect(run.isError).toBe(true);
      expect(upstream.received).toHaveLength(0);
      await client.close();
    });
  },
);
