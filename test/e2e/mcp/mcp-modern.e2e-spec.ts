import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { ConnectBrowser } from '../connect-links/connect.js';
import { Upstream } from '../execution/upstream.js';
import { connectModern, modernEnvelope, postMcp } from './mcp-client.js';

const node = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  visible: Object.keys(properties),
  additionalProperties: false,
});

const MODERN = '2026-07-28';
const envelope = modernEnvelope;

/** Protocol 2026-07-28 on /v1/mcp, driven by the v2 SDK client and by hand where the SDK would not go. */
describe('/v1/mcp protocol 2026-07-28 (v2 SDK client)', () => {
  let app: TestApp;
  let upstream: Upstream;
  let apiKey: string;
  let projectId: string;
  let scenario: Scenario;

  const restFunction = (method: string): Partial<FunctionEntity> => ({
    protocol: 'rest',
    protocol_data: { method, path: '/items', server_url: `${upstream.url}/api` },
    parameters: node({ query: node({ q: { type: 'string' } }, ['q']) }),
  });
  const asOwner = (owner: string) => ({ 'x-api-key': apiKey, 'x-linked-account-owner-id': owner });
  const text = (result: Record<string, unknown>) => (result.content as { text: string }[])[0].text;
  /** A hand-made 2026-07-28 POST with the standard headers the revision requires. */
  const modernPost = (body: Record<string, unknown>, headers: Record<string, string> = {}, query = '') =>
    postMcp(
      app.url,
      { jsonrpc: '2.0', id: 1, ...body },
      { 'x-api-key': apiKey, 'mcp-protocol-version': MODERN, 'mcp-method': String(body.method), ...headers },
      `/v1/mcp${query}`,
    );

  beforeAll(async () => {
    app = await TestApp.start();
    upstream = await Upstream.start();
    ({ projectId, apiKey } = await app.ctx.newProject());
    scenario = await executionScenario(app, { projectId, scheme: 'no_auth', function: restFunction('GET') });
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
  });

  beforeEach(() => upstream.reset());

  it('answers server/discover with its revision, identity and tools capability; no session', async () => {
    const res = await modernPost({ method: 'server/discover', params: { _meta: envelope() } });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const result = res.body.result;
    // Discover lists the per-request revisions; 2025-era versions are negotiated by initialize.
    expect(result.supportedVersions).toEqual([MODERN]);
    expect(result.capabilities.tools).toEqual({ listChanged: true });
    expect(result._meta['io.modelcontextprotocol/serverInfo'].name).toBe('patchbay');
    expect(result.instructions).toContain('search_functions');
    // The same URL still answers the 2025-11-25 handshake.
    const legacy = await postMcp(
      app.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      },
      { 'x-api-key': apiKey },
    );
    expect(legacy.body.result.protocolVersion).toBe('2025-11-25');
    expect(legacy.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('connects (discover, no initialize), lists tools in a stable order with cache hints, and executes', async () => {
    const { client } = await connectModern(app.url, { headers: asOwner(scenario.owner) });
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(client.getServerVersion()?.name).toBe('patchbay');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['search_functions', 'get_function_definition', 'execute_function']);
    upstream.respondJson(200, { temperature: 21 });
    const result = await client.callTool({
      name: 'execute_function',
      arguments: { function_name: scenario.fn.name, function_input: { query: { q: 'Oslo' } } },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ success: true, data: { temperature: 21 } });
    expect(upstream.last.url).toBe('/api/items?q=Oslo');
    await client.close();

    // On the wire: ttlMs/cacheScope on lists (unified mode's list is the same for everyone; a
    // direct-mode list is the caller's own and short-lived), and the same order every time.
    const unified = await modernPost({ method: 'tools/list', params: { _meta: envelope() } });
    expect(unified.body.result).toMatchObject({ ttlMs: 86_400_000, cacheScope: 'public' });
    const direct = await modernPost({ method: 'tools/list', params: { _meta: envelope() } }, {}, '?mode=direct');
    expect(direct.body.result).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
    const again = await modernPost({ method: 'tools/list', params: { _meta: envelope() } }, {}, '?mode=direct');
    expect(again.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(
      direct.body.result.tools.map((tool: { name: string }) => tool.name),
    );
  });

  it('checks the Mcp-Method and Mcp-Name headers against the body', async () => {
    const call = {
      method: 'tools/call',
      params: { name: 'search_functions', arguments: { intent: 'x' }, _meta: envelope() },
    };
    const missingMethod = await postMcp(
      app.url,
      { jsonrpc: '2.0', id: 1, ...call },
      { 'x-api-key': apiKey, 'mcp-protocol-version': MODERN },
    );
    expect(missingMethod.body.error.message).toMatch(/Mcp-Method/);
    const wrongName = await modernPost(call, { 'mcp-name': 'execute_function' });
    expect(wrongName.body.error.message).toMatch(/Mcp-Name/);
    const right = await modernPost(call, { 'mcp-name': 'search_functions' });
    expect(right.status).toBe(200);
    expect(right.body.result.content[0].type).toBe('text');
  });

  it('refuses a revision it does not serve, naming the ones it does', async () => {
    const res = await postMcp(
      app.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      },
      { 'x-api-key': apiKey, 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
    );
    expect(res.body.error.code).toBe(-32022);
    expect(JSON.stringify(res.body.error.data)).toContain(MODERN);
  });

  it('keeps the credential checks of the other revision: 401 without credentials, 403 for another owner', async () => {
    const bare = await postMcp(
      app.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
    );
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const token = await app.post('/v1/mcp/tokens', { linked_account_owner_id: 'token-owner' }, { apiKey });
    const other = await postMcp(
      app.url,
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } },
      {
        authorization: `Bearer ${token.body.token}`,
        'x-linked-account-owner-id': 'someone-else',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/list',
      },
    );
    expect(other.status).toBe(403);
  });

  describe('linking an account: an input-required round trip carrying the link', () => {
    it('asks for the link, lets the user connect through it, then runs the call on the retry', async () => {
      const linked = await executionScenario(app, {
        projectId,
        scheme: 'api_key',
        settings: { location: 'header', name: 'X-Key' },
        function: restFunction('GET'),
        credentials: { secret_key: 'unused' },
      });
      const asked: string[] = [];
      const { client } = await connectModern(app.url, {
        headers: asOwner('new-user'),
        capabilities: { elicitation: { url: {} } },
        onUrlElicitation: async (params) => {
          asked.push(params.url);
          // The user opens the link and enters their key on the connect page.
          const browser = new ConnectBrowser(app);
          const page = await browser.open(params.url);
          const done = await browser.submit(page, { api_key: 'sk-new-user-key' });
          expect(done.text).toContain('Account linked');
          return { action: 'accept' };
        },
      });
      upstream.respondJson(200, { ok: 'linked' });
      const result = await client.callTool({
        name: 'execute_function',
        arguments: { function_name: linked.fn.name, function_input: { query: { q: 'after' } } },
      });
      expect(asked).toHaveLength(1);
      const url = new URL(asked[0]);
      expect(url.pathname).toMatch(/^\/connect\/[0-9a-f-]{36}$/);
      expect(asked[0]).not.toContain('new-user');
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ success: true, data: { ok: 'linked' } });
      expect(upstream.last.headers['x-key']).toBe('sk-new-user-key');
      await client.close();
    });

    it('carries the link on the wire as a URL elicitation without elicitationId', async () => {
      const app2 = await executionScenario(app, {
        projectId,
        scheme: 'no_auth',
        function: restFunction('GET'),
        account: { linked_account_owner_id: 'someone' },
      });
      const res = await modernPost(
        {
          method: 'tools/call',
          params: {
            name: 'execute_function',
            arguments: { function_name: app2.fn.name, function_input: { query: { q: 'x' } } },
            _meta: envelope({ elicitation: { url: {} } }),
          },
        },
        { 'x-linked-account-owner-id': 'nobody-yet', 'mcp-name': 'execute_function' },
      );
      expect(res.body.result.resultType).toBe('input_required');
      const request = Object.values(
        res.body.result.inputRequests as Record<string, { method: string; params: Record<string, unknown> }>,
      )[0];
      expect(request.method).toBe('elicitation/create');
      expect(request.params.mode).toBe('url');
      expect(request.params.url).toMatch(/^http:\/\/127\.0\.0\.1:8000\/connect\//);
      expect(request.params).not.toHaveProperty('elicitationId');
    });

    it('puts the link in the tool error when the request declares no URL elicitation, or the user declined', async () => {
      const row = await executionScenario(app, {
        projectId,
        scheme: 'no_auth',
        function: restFunction('GET'),
        account: { linked_account_owner_id: 'someone' },
      });
      const call = { name: 'execute_function', arguments: { function_name: row.fn.name, function_input: {} } };
      const { client } = await connectModern(app.url, { headers: asOwner('plain-user') });
      const plain = await client.callTool(call);
      expect(plain.isError).toBe(true);
      expect(text(plain)).toMatch(
        /Open this address to connect your .* account.*http:\/\/127\.0\.0\.1:8000\/connect\//,
      );
      await client.close();

      const declining = await connectModern(app.url, {
        headers: asOwner('declining-user'),
        capabilities: { elicitation: { url: {} } },
        onUrlElicitation: () => Promise.resolve({ action: 'decline' }),
      });
      const declined = await declining.client.callTool(call);
      expect(declined.isError).toBe(true);
      expect(text(declined)).toContain('/connect/');
      await declining.client.close();
    });
  });
});
