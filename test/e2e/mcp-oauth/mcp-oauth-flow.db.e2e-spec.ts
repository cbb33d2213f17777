import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { freePort } from '../../helpers/free-port.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';
import type { OidcServer } from '../oauth2/oidc-server.js';
import { IDP_CLIENT, MemoryOAuthClient, playBrowser, startIdentityProvider } from './mcp-oauth.js';

const node = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  visible: Object.keys(properties),
  additionalProperties: false,
});

// The MCP TypeScript SDK's own client OAuth flow against a project's MCP address.
describe('MCP clients sign users in by OAuth 2.1 at /v1/mcp/p/{project}', () => {
  let app: TestApp;
  let base: string;
  let upstream: Upstream;
  let idp: OidcServer;
  let projectId: string;
  let apiKey: string;
  let mcpUrl: string;
  let scenario: Scenario;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await TestApp.start({ PUBLIC_BASE_URL: base }, { port });
    upstream = await Upstream.start();
    ({ projectId, apiKey } = await app.ctx.newProject('Acme Assistant'));
    mcpUrl = `${base}/v1/mcp/p/${projectId}`;
    scenario = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: {
        protocol: 'rest',
        protocol_data: { method: 'POST', path: '/notes', server_url: `${upstream.url}/api` },
        parameters: node({ body: node({ title: { type: 'string' } }, ['title']) }),
      },
      account: { linked_account_owner_id: 'alice@example.test' },
    });
    idp = await startIdentityProvider(app, projectId);
    const set = await app.put(
      '/v1/mcp/identity-provider',
      { issuer: idp.issuer, ...IDP_CLIENT, scopes: 'openid email', owner_claim: 'email' },
      { apiKey },
    );
    expect(set.status, set.text).toBe(200);
    expect(set.body).toEqual({
      issuer: idp.issuer,
      client_id: IDP_CLIENT.client_id,
      client_secret: '****',
      scopes: 'openid email',
      owner_claim: 'email',
      mcp_url: mcpUrl,
      redirect_uri: `${mcpUrl}/sign-in/callback`,
    });
  });

  afterAll(async () => {
    await idp?.close();
    await upstream?.close();
    await app?.close();
  });

  it('401 with resource_metadata, then discovery, DCR, sign-in, consent, token, tools/list and tools/call as that user', async () => {
    const bare = await fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(bare.status).toBe(401);
    const metadataUrl = `${base}/.well-known/oauth-protected-resource/v1/mcp/p/${projectId}`;
    expect(bare.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}", scope="mcp"`);
    const resourceMetadata = await (await fetch(metadataUrl)).json();
    expect(resourceMetadata).toMatchObject({ resource: mcpUrl, authorization_servers: [mcpUrl] });
    const serverMetadata: any = await (
      await fetch(`${base}/.well-known/oauth-authorization-server/v1/mcp/p/${projectId}`)
    ).json();
    expect(serverMetadata).toMatchObject({
      issuer: mcpUrl,
      authorization_endpoint: `${mcpUrl}/auth`,
      token_endpoint: `${mcpUrl}/token`,
      registration_endpoint: `${mcpUrl}/reg`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(serverMetadata.token_endpoint_auth_methods_supported).toContain('none');
    const openid: any = await (await fetch(`${mcpUrl}/.well-known/openid-configuration`)).json();
    expect(openid.issuer).toBe(mcpUrl);

    const oauth = new MemoryOAuthClient('http://127.0.0.1:53682/callback', 'Test Agent');
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: oauth });
    await expect(new Client({ name: 'test', version: '1.0.0' }).connect(transport)).rejects.toThrow(UnauthorizedError);
    // Registered by DCR; the authorization request names the resource and a PKCE S256 challenge.
    expect(oauth.information?.client_id).toBeTruthy();
    const authorizationUrl = oauth.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get('resource')).toBe(mcpUrl);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

    let consent = '';
    const { redirect } = await playBrowser(authorizationUrl, base, idp, {
      login: 'alice',
      onConsent: (html) => (consent = html),
    });
    expect(consent).toContain('Allow Test Agent to use Acme Assistant?');
    expect(consent).toContain('alice@example.test');
    expect(consent).toContain(scenario.app.display_name);
    expect(redirect?.origin).toBe('http://127.0.0.1:53682');
    expect(redirect?.searchParams.get('iss')).toBe(mcpUrl);
    const code = redirect?.searchParams.get('code') as string;
    await transport.finishAuth(code);
    expect(oauth.savedTokens?.access_token).toBeTruthy();
    expect(oauth.savedTokens?.refresh_token).toBeTruthy();

    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: oauth }));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['search_functions', 'get_function_definition', 'execute_function']);
    const result = await client.callTool({
      name: 'execute_function',
      arguments: { function_name: scenario.fn.name, function_input: { body: { title: 'from Claude' } } },
    });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(JSON.parse(upstream.last.body)).toEqual({ title: 'from Claude' });
    await client.close();

    // The execution is logged as the consent's MCP token, for alice.
    const log = await app.get('/v1/executions', { apiKey });
    const mcpRow = log.body.find((row: { source: string }) => row.source === 'mcp');
    expect(mcpRow).toMatchObject({ linked_account_owner_id: 'alice@example.test' });
    expect(mcpRow.mcp_token_id).toMatch(/^[0-9a-f-]{36}$/);

    // GET /v1/mcp/tokens lists that token with the client's registered name, beside a token created with POST.
    const pasted = await app.post('/v1/mcp/tokens', { linked_account_owner_id: 'bob' }, { apiKey });
    expect(pasted.status, pasted.text).toBe(201);
    const listed = await app.get('/v1/mcp/tokens', { apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      {
        id: pasted.body.id,
        linked_account_owner_id: 'bob',
        apps: null,
        client_name: null,
        client_id: null,
        expires_at: pasted.body.expires_at,
        created_at: expect.any(String),
      },
      {
        id: mcpRow.mcp_token_id,
        linked_account_owner_id: 'alice@example.test',
        apps: null,
        client_name: 'Test Agent',
        client_id: oauth.information?.client_id,
        expires_at: expect.any(String),
        created_at: expect.any(String),
      },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(pasted.body.token);
    // A revoked token is no longer listed.
    expect((await app.request('DELETE', `/v1/mcp/tokens/${pasted.body.id}`, { apiKey })).status).toBe(204);
    expect((await app.get('/v1/mcp/tokens', { apiKey })).body.map((row: { id: string }) => row.id)).toEqual([
      mcpRow.mcp_token_id,
    ]);
  });
});
