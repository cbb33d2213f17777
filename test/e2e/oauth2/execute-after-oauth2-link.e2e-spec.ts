import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import type { AppEntity } from '../../../src/apps/app.entity.js';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';
import { callback, newOAuth2App, nowSeconds, startLinking, storedAccount } from './linking.js';
import { type OidcClient, OidcServer } from './oidc-server.js';

const PUBLIC_BASE_URL = 'http://patchbay.test';
const client: OidcClient = {
  client_id: 'calendar-client',
  client_secret: 'calendar-secret',
  redirect_uris: [`${PUBLIC_BASE_URL}/v1/linked-accounts/oauth2/callback`],
};

/**
 * An account linked through the real OAuth 2.0 flow is used by function execution: its access token
 * is sent upstream, refreshed at the provider (which rotates refresh tokens) once it expires, and an
 * account whose refresh token the provider refuses is repaired by linking it again.
 */
describe('POST /v1/functions/{function_name}/execute after OAuth 2.0 linking', () => {
  let app: TestApp;
  let oidc: OidcServer;
  let api: Upstream;
  let project: TestProject;
  let calendar: AppEntity;
  let fn: FunctionEntity;

  const link = async (owner: string) => {
    const url = await startLinking(app, project.apiKey, { app_name: calendar.name, linked_account_owner_id: owner });
    const res = await callback(app, (await oidc.authorize(url)).searchParams);
    expect(res.status, res.text).toBe(200);
    return res.body as { id: string };
  };

  const execute = (owner: string) =>
    app.post(`/v1/functions/${fn.name}/execute`, { linked_account_owner_id: owner }, { apiKey: project.apiKey });

  /** Rewrites the stored tokens as time (or a revocation) would. */
  const rewrite = async (id: string, change: Record<string, unknown>) => {
    const { credentials } = await storedAccount(app, id);
    const sealed = app.app.get(SecretBox).sealJson({ ...credentials, ...change });
    await app.dataSource.getRepository(LinkedAccountEntity).update({ id }, { credentials: sealed });
    // Written behind the service's back: tell its caches, as the services that write accounts do.
    await app.announce('linked_accounts');
  };

  beforeAll(async () => {
    app = await TestApp.start({ PUBLIC_BASE_URL });
    oidc = await OidcServer.start([client]);
    api = await Upstream.start();
    project = await app.ctx.newProject();
    calendar = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme({ client_id: client.client_id }),
      appClientSecret: client.client_secret,
    });
    fn = await app.ctx.newFunction(calendar.name, {
      protocol: 'rest',
      protocol_data: { method: 'GET', path: '/me', server_url: api.url },
      parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
    });
  });

  afterAll(async () => {
    await api.close();
    await oidc.close();
    await app.close();
  });

  beforeEach(() => api.reset());

  it('sends the linked access token, then refreshes it at the provider once it has expired', async () => {
    const account = await link('ana');
    const linked = (await storedAccount(app, account.id)).credentials;

    let res = await execute('ana');
    expect(res.body, res.text).toEqual({ success: true, data: { ok: true }, error: null });
    expect(api.last.headers.authorization).toBe(`Bearer ${linked.access_token}`);

    await rewrite(account.id, { expires_at: nowSeconds() - 10 });
    const sent = oidc.tokenRequests.length;
    res = await execute('ana');
    expect(res.body.success, res.text).toBe(true);

    // One refresh grant at the provider, with the linked refresh token and the app's client.
    expect(oidc.tokenRequests).toHaveLength(sent + 1);
    const refresh = oidc.tokenRequests[sent];
    expect(refresh.status).toBe(200);
    expect(refresh.form).toEqual({ grant_type: 'refresh_token', refresh_token: linked.refresh_token });
    const [kind, encoded] = (refresh.authorization ?? '').split(' ');
    expect(kind).toBe('Basic');
    expect(Buffer.from(encoded, 'base64').toString('utf8').split(':').map(decodeURIComponent)).toEqual([
      'calendar-client',
      'calendar-secret',
    ]);

    // The fresh token went upstream and is stored, with the rotated refresh token.
    const refreshed = (await storedAccount(app, account.id)).credentials;
    expect(refreshed.access_token).toBe(refresh.response.access_token);
    expect(refreshed.access_token).not.toBe(linked.access_token);
    expect(api.last.headers.authorization).toBe(`Bearer ${refreshed.access_token}`);
    expect(refreshed.refresh_token).toBe(refresh.response.refresh_token);
    expect(refreshed.refresh_token).not.toBe(linked.refresh_token);
    expect(refreshed.expires_at).toBeGreaterThan(nowSeconds() + 3000);

    // Rotation: the provider no longer takes the refresh token from the link.
    const stale = await oidc.refresh(client, linked.refresh_token as string);
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('invalid_grant');
  });

  it('fails executions once the provider refuses the refresh token, until the owner links again (same id)', async () => {
    const account = await link('ben');
    await rewrite(account.id, { expires_at: nowSeconds() - 10, refresh_token: 'revoked-refresh-token' });

    let res = await execute('ben');
    expect(res.body.success).toBe(false);
    expect(res.body.error).toContain('needs re-linking');
    expect((await storedAccount(app, account.id)).row.needs_relink).toBe(true);
    const calls = api.received.length;
    expect((await execute('ben')).body.success).toBe(false);
    expect(api.received).toHaveLength(calls);

    const relinked = await link('ben');
    expect(relinked.id).toBe(account.id);
    expect((await storedAccount(app, account.id)).row.needs_relink).toBe(false);
    res = await execute('ben');
    expect(res.body, res.text).toEqual({ success: true, data: { ok: true }, error: null });
    expect(api.last.headers.authorization).toBe(
      `Bearer ${(await storedAccount(app, account.id)).credentials.access_token}`,
    );
  });
});
