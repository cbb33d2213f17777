import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import type { SecurityScheme } from '../../../src/apps/security-scheme.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { LogCapture } from '../../helpers/log-capture.js';
import { TestApp } from '../../helpers/test-app.js';
import { ConnectBrowser, createLink } from '../connect-links/connect.js';
import { Upstream } from '../execution/upstream.js';
import { connectMcp } from '../mcp/mcp-client.js';
import { callback, newOAuth2App, nowSeconds, startLinking, storedAccount } from '../oauth2/linking.js';
import { type OidcClient, OidcServer } from '../oauth2/oidc-server.js';

const PUBLIC_BASE_URL = 'http://patchbay.test';
const client: OidcClient = {
  client_id: 'log-scan-client',
  client_secret: 'log-scan-app-client-secret-5e1f',
  redirect_uris: [`${PUBLIC_BASE_URL}/v1/linked-accounts/oauth2/callback`],
};

/**
 * Issue #15: representative flows run against the real service with its real logger at `trace` (the
 * most verbose level), every line captured; no secret used by the flows may appear in any line.
 */
describe('no secret reaches a log line', () => {
  const logs = new LogCapture();
  let app: TestApp;
  let upstream: Upstream;
  let oidc: OidcServer;
  const secrets = new Map<string, string>();
  const remember = (label: string, value: string | undefined | null) => {
    expect(value, label).toBeTruthy();
    secrets.set(label, value as string);
  };

  beforeAll(async () => {
    app = await TestApp.start({ PUBLIC_BASE_URL }, { logs });
    upstream = await Upstream.start();
    oidc = await OidcServer.start([client]);
  }, 120_000);

  afterAll(async () => {
    await oidc?.close();
    await upstream?.close();
    await app?.close();
  });

  it('through API keys, every credential scheme, OAuth 2.0 linking and refresh, MCP tokens and connect links', async () => {
    const project = await app.ctx.newProject('log scan');
    const apiKey = project.apiKey;
    remember('project API key', apiKey);
    const wrongKey = 'pb_log-scan-wrong-key-0f9d8c7b6a5e4d3c2b1a';
    remember('a wrong API key', wrongKey);
    expect((await app.get('/v1/apps/search', { apiKey: wrongKey })).status).toBe(401);
    expect((await app.get('/v1/apps/search', { apiKey })).status).toBe(200);

    const fn = async (scheme: SecurityScheme, settings: Record<string, unknown>) => {
      const row = await app.ctx.newApp({ security_schemes: { [scheme]: settings } });
      const configured = await app.post(
        '/v1/app-configurations',
        { app_name: row.name, security_scheme: scheme },
        { apiKey },
      );
      expect(configured.status, configured.text).toBe(200);
      const created = await app.ctx.newFunction(row.name, {
        protocol: 'rest',
        protocol_data: { method: 'GET', path: `/${scheme}`, server_url: upstream.url },
        parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
      });
      return { app: row.name, fn: created.name };
    };
    const execute = async (target: { fn: string }, owner: string) => {
      const res = await app.post(`/v1/functions/${target.fn}/execute`, { linked_account_owner_id: owner }, { apiKey });
      expect(res.body, res.text).toMatchObject({ success: true });
    };

    // Linked credentials of each scheme, linked through the API and used by an execution.
    const apiKeyApp = await fn('api_key', { location: 'header', name: 'x-upstream-key' });
    const basicApp = await fn('http_basic', {});
    const bearerApp = await fn('http_bearer', {});
    const linked: [string, { app: string; fn: string }, Record<string, string>][] = [
      ['/v1/linked-accounts/api-key', apiKeyApp, { api_key: 'log-scan-linked-api-key-3c4d' }],
      ['/v1/linked-accounts/http-basic', basicApp, { username: 'log-scan-user', password: 'log-scan-password-8a9b' }],
      ['/v1/linked-accounts/http-bearer', bearerApp, { token: 'log-scan-bearer-token-1e2f' }],
    ];
    for (const [path, target, credentials] of linked) {
      const res = await app.post(
        path,
        { app_name: target.app, linked_account_owner_id: 'log-owner', ...credentials },
        { apiKey },
      );
      expect(res.status, res.text).toBe(200);
      await execute(target, 'log-owner');
    }
    remember('api_key credential', 'log-scan-linked-api-key-3c4d');
    remember('http_basic password', 'log-scan-password-8a9b');
    remember('http_basic header', Buffer.from('log-scan-user:log-scan-password-8a9b').toString('base64'));
    remember('http_bearer token', 'log-scan-bearer-token-1e2f');
    expect(upstream.received.map((r) => r.headers['x-upstream-key'] ?? r.headers.authorization)).toEqual([
      'log-scan-linked-api-key-3c4d',
      `Basic ${secrets.get('http_basic header')}`,
      'Bearer log-scan-bearer-token-1e2f',
    ]);

    // OAuth 2.0: the app's client secret (stored sealed), a project's client secret (sent through the
    // API), the authorization code and state, the tokens, a refresh.
    remember('app client secret', client.client_secret);
    const calendar = await newOAuth2App(app, apiKey, {
      scheme: oidc.scheme({ client_id: client.client_id }),
      appClientSecret: client.client_secret,
    });
    const overridden = await app.ctx.newApp({
      security_schemes: { oauth2: oidc.scheme({ client_id: client.client_id }) },
    });
    const override = { client_id: 'log-scan-project-client', client_secret: 'log-scan-project-client-secret-7d6c' };
    remember('project client secret', override.client_secret);
    const configured = await app.post(
      '/v1/app-configurations',
      { app_name: overridden.name, security_scheme: 'oauth2', security_scheme_overrides: { oauth2: override } },
      { apiKey },
    );
    expect(configured.status, configured.text).toBe(200);
    const patched = await app.patch(
      `/v1/app-configurations/${overridden.name}`,
      { security_scheme_overrides: { oauth2: override } },
      { apiKey },
    );
    expect(patched.status, patched.text).toBe(200);

    const authorizationUrl = await startLinking(app, apiKey, {
      app_name: calendar.name,
      linked_account_owner_id: 'oauth-owner',
    });
    const redirect = await oidc.authorize(authorizationUrl);
    remember('authorization code', redirect.searchParams.get('code'));
    remember('state', redirect.searchParams.get('state'));
    const linkedOAuth = await callback(app, redirect.searchParams);
    expect(linkedOAuth.status, linkedOAuth.text).toBe(200);
    const account = await storedAccount(app, (linkedOAuth.body as { id: string }).id);
    remember('access token', account.credentials.access_token);
    remember('refresh token', account.credentials.refresh_token);
    const calendarFn = await app.ctx.newFunction(calendar.name, {
      protocol: 'rest',
      protocol_data: { method: 'GET', path: '/me', server_url: upstream.url },
      parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
    });
    await execute({ fn: calendarFn.name }, 'oauth-owner');
    // Expired: the next execution refreshes at the provider.
    const expired = app.app.get(SecretBox).sealJson({ ...account.credentials, expires_at: nowSeconds() - 10 });
    await app.dataSource.getRepository(LinkedAccountEntity).update({ id: account.row.id }, { credentials: expired });
    await app.announce('linked_accounts');
    await execute({ fn: calendarFn.name }, 'oauth-owner');
    const refreshed = await storedAccount(app, account.row.id);
    expect(refreshed.credentials.access_token).not.toBe(account.credentials.access_token);
    remember('refreshed access token', refreshed.credentials.access_token);
    remember('rotated refresh token', refreshed.credentials.refresh_token);

    // MCP: an owner-scoped token, used by the SDK's client.
    const token = await app.post('/v1/mcp/tokens', { linked_account_owner_id: 'log-owner' }, { apiKey });
    expect(token.status, token.text).toBe(201);
    remember('MCP token', (token.body as { token: string }).token);
    const { client: mcp } = await connectMcp(app.url, {
      headers: { authorization: `Bearer ${secrets.get('MCP token')}` },
    });
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
    await mcp.close();

    // Connect link: its token, the page's cookie and CSRF token, and the secret typed into the form.
    const link = await createLink(app, apiKey, { app_name: apiKeyApp.app, linked_account_owner_id: 'connect-owner' });
    remember('connect-link token', new URL(link.url).searchParams.get('token'));
    const browser = new ConnectBrowser(app);
    const page = await browser.open(link.url);
    expect(page.status).toBe(200);
    remember('connect page cookie', browser.cookie?.split('=').slice(1).join('='));
    remember('CSRF token', /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1]);
    const submitted = await browser.submit(page, { api_key: 'log-scan-connect-typed-secret-2b3a' });
    expect(submitted.status).toBe(200);
    remember('connect-typed secret', 'log-scan-connect-typed-secret-2b3a');

    // The flows were logged at trace (requests, responses), so the search below looks at real lines.
    const lines = logs.lines();
    expect(lines.length).toBeGreaterThan(50);
    expect(logs.linesWith('/v1/linked-accounts/oauth2/callback').length).toBeGreaterThan(0);
    expect(logs.linesWith(`/connect/${link.id}`).length).toBeGreaterThan(0);
    const leaks = [...secrets].flatMap(([label, value]) =>
      logs.linesWith(value).map((line) => `${label}: ${line.slice(0, 300)}`),
    );
    expect(leaks).toEqual([]);
  }, 180_000);
});
