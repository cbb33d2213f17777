import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionScenario, pingFunction, type Scenario } from '../../factories/execution.factory.js';
import { freePort } from '../../helpers/free-port.js';
import { runMcpPythonScript, setUpMcpPythonSdk } from '../../helpers/mcp-python-sdk.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';
import type { OidcServer } from '../oauth2/oidc-server.js';
import { IDP_CLIENT, startIdentityProvider } from './mcp-oauth.js';

/**
 * The official Python MCP SDK's OAuth client (`mcp` 2.3, OAuthClientProvider) at a project's MCP address, headless:
 * discovery, dynamic registration, PKCE, sign-in at the project's identity provider, consent on Patchbay, the token,
 * then tools/list and tools/call as the signed-in user (test/sdk/mcp_python/oauth_client.py plays the browser).
 */
describe('MCP sign-in with the Python MCP SDK OAuth client', () => {
  let app: TestApp;
  let upstream: Upstream;
  let idp: OidcServer;
  let apiKey: string;
  let mcpUrl: string;
  let scenario: Scenario;

  beforeAll(async () => {
    setUpMcpPythonSdk();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    app = await TestApp.start({ PUBLIC_BASE_URL: base }, { port });
    upstream = await Upstream.start();
    let projectId: string;
    ({ projectId, apiKey } = await app.ctx.newProject('Acme Assistant'));
    mcpUrl = `${base}/v1/mcp/p/${projectId}`;
    scenario = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: pingFunction(`${upstream.url}/api`),
      account: { linked_account_owner_id: 'paula@example.test' },
    });
    idp = await startIdentityProvider(app, projectId);
    const set = await app.put(
      '/v1/mcp/identity-provider',
      { issuer: idp.issuer, ...IDP_CLIENT, scopes: 'openid email', owner_claim: 'email' },
      { apiKey },
    );
    expect(set.status, set.text).toBe(200);
  }, 300_000);

  afterAll(async () => {
    await idp?.close();
    await upstream?.close();
    await app?.close();
  });

  it('signs in end to end, lists the tools and executes as that user; the token is listed with its client name', async () => {
    const seen = await runMcpPythonScript<Record<string, unknown>>('oauth_client.py', [
      mcpUrl,
      'paula',
      scenario.fn.name,
    ]);
    expect(seen).toMatchObject({
      consent_title: 'Allow Python Agent to use Acme Assistant?',
      iss: mcpUrl,
      has_refresh_token: true,
      tools: ['search_functions', 'get_function_definition', 'execute_function'],
      is_error: false,
      structured: { success: true, data: { ok: true } },
    });
    expect(upstream.last).toMatchObject({ method: 'GET', url: '/api/ping' });

    const log = await app.get('/v1/executions', { apiKey });
    expect(log.body.find((row: { source: string }) => row.source === 'mcp')).toMatchObject({
      linked_account_owner_id: 'paula@example.test',
    });
    const tokens = await app.get('/v1/mcp/tokens', { apiKey });
    expect(tokens.body).toEqual([
      expect.objectContaining({
        linked_account_owner_id: 'paula@example.test',
        client_name: 'Python Agent',
        client_id: seen.client_id,
      }),
    ]);
  }, 120_000);
});
