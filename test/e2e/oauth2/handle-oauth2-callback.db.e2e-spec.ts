import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import type { AppEntity } from '../../../src/apps/app.entity.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { OAuth2StateEntity } from '../../../src/oauth2/oauth2-state.entity.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { callback, countAccounts, newOAuth2App, nowSeconds, startLinking, stateOf, storedAccount } from './linking.js';
import { type OidcClient, OidcServer } from './oidc-server.js';

const PUBLIC_BASE_URL = 'http://patchbay.test';
const REDIRECT_URI = `${PUBLIC_BASE_URL}/v1/linked-accounts/oauth2/callback`;
const AFTER = 'https://app.example.com/integrations?tab=calendar';

const basicClient: OidcClient = {
  client_id: 'basic-client',
  client_secret: 'basic-secret',
  redirect_uris: [REDIRECT_URI],
  token_endpoint_auth_method: 'client_secret_basic',
};
const postClient: OidcClient = {
  client_id: 'post-client',
  client_secret: 'post-secret',
  redirect_uris: [REDIRECT_URI],
  token_endpoint_auth_method: 'client_secret_post',
};

/** GET /v1/linked-accounts/oauth2/callback against a strict authorization server (oidc-provider). */
describe('GET /v1/linked-accounts/oauth2/callback', () => {
  let app: TestApp;
  let oidc: OidcServer;
  let project: TestProject;
  /** The app's own client (client_secret_basic), from the catalogue. */
  let basicApp: AppEntity;
  /** The project's client from the configuration's overrides (client_secret_post). */
  let postApp: AppEntity;

  const states = () => app.dataSource.getRepository(OAuth2StateEntity);
  const hash = (state: string) => createHash('sha256').update(state).digest('hex');

  /** Start through the API, then sign in and consent at the provider; returns the provider's redirect. */
  const authorize = async (
    appName: string,
    owner: string,
    options: { after?: string; deny?: boolean } = {},
  ): Promise<URL> => {
    const url = await startLinking(app, project.apiKey, {
      app_name: appName,
      linked_account_owner_id: owner,
      ...(options.after ? { after_oauth2_link_redirect_url: options.after } : {}),
    });
    const back = await oidc.authorize(url, { deny: options.deny });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    return back;
  };

  beforeAll(async () => {
    app = await TestApp.start({ PUBLIC_BASE_URL, OAUTH2_REDIRECT_ALLOWED_ORIGINS: 'https://app.example.com' });
    oidc = await OidcServer.start([basicClient, postClient]);
    project = await app.ctx.newProject();
    basicApp = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme({ client_id: basicClient.client_id }),
      appClientSecret: basicClient.client_secret,
    });
    postApp = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme({ token_endpoint_auth_method: 'client_secret_post' }),
      override: { client_id: postClient.client_id, client_secret: postClient.client_secret },
    });
  });

  afterAll(async () => {
    await oidc.close();
    await app.close();
  });

  it('links the account: exchanges the code with the PKCE verifier (client_secret_basic) and stores the tokens sealed', async () => {
    const back = await authorize(basicApp.name, 'alice');
    const state = back.searchParams.get('state') as string;
    const verifier = app.app
      .get(SecretBox)
      .open((await states().findOneByOrFail({ state_hash: hash(state) })).code_verifier);
    const sent = oidc.tokenRequests.length;

    const res = await callback(app, back.searchParams);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      id: expect.any(String),
      project_id: project.projectId,
      app_name: basicApp.name,
      linked_account_owner_id: 'alice',
      security_scheme: 'oauth2',
      enabled: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    // What the token endpoint received: one request, the client in the Basic header, the verifier.
    expect(oidc.tokenRequests).toHaveLength(sent + 1);
    const request = oidc.tokenRequests[sent];
    expect(request.status).toBe(200);
    // RFC 6749 §2.3.1: id and secret are form-encoded, then joined and base64-encoded.
    const [scheme, encoded] = (request.authorization ?? '').split(' ');
    expect(scheme).toBe('Basic');
    const pair = Buffer.from(encoded, 'base64').toString('utf8').split(':').map(decodeURIComponent);
    expect(pair).toEqual(['basic-client', 'basic-secret']);
    expect(request.form).toEqual({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code'),
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
    });

    const { row, credentials } = await storedAccount(app, res.body.id);
    expect(credentials).toEqual({
      access_token: request.response.access_token,
      refresh_token: request.response.refresh_token,
      expires_at: expect.any(Number),
      // As granted: the provider dropped offline_access from the requested "calendar.read offline_access".
      scope: 'calendar.read',
      token_type: 'bearer',
    });
    expect(request.response.scope).toBe('calendar.read');
    expect(credentials.expires_at).toBeGreaterThanOrEqual(nowSeconds() + 3590);
    expect(credentials.expires_at).toBeLessThanOrEqual(nowSeconds() + 3600);
    expect(row.credentials).not.toContain(String(credentials.access_token));
    expect(res.text).not.toContain(String(credentials.access_token));
    expect(row.needs_relink).toBe(false);

    // Visible through the API; the flow's state is gone.
    const listed = await app.get('/v1/linked-accounts', {
      apiKey: project.apiKey,
      query: { app_name: basicApp.name, linked_account_owner_id: 'alice' },
    });
    expect(listed.body).toEqual([res.body]);
    expect(await states().countBy({ state_hash: hash(state) })).toBe(0);
  });

  it("authenticates with client_secret_post when the scheme says so, with the configuration's client", async () => {
    const back = await authorize(postApp.name, 'alice');
    const sent = oidc.tokenRequests.length;
    const res = await callback(app, back.searchParams);
    expect(res.status, res.text).toBe(200);
    const request = oidc.tokenRequests[sent];
    expect(request.authorization).toBeUndefined();
    expect(request.form).toMatchObject({
      grant_type: 'authorization_code',
      client_id: 'post-client',
      client_secret: 'post-secret',
      redirect_uri: REDIRECT_URI,
    });
  });

  it('fails with the provider error when the client secret is wrong (client authentication is enforced), creating nothing', async () => {
    const wrong = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme({ token_endpoint_auth_method: 'client_secret_post' }),
      override: { client_id: postClient.client_id, client_secret: 'not-the-secret' },
    });
    const back = await authorize(wrong.name, 'alice');
    const sent = oidc.tokenRequests.length;
    const res = await callback(app, back.searchParams);
    expect(oidc.tokenRequests[sent]).toMatchObject({
      status: 401,
      form: { client_secret: 'not-the-secret' },
      response: { error: 'invalid_client' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^The OAuth 2.0 token endpoint refused the authorization code: invalid_client/);
    expect(res.text).not.toContain('not-the-secret');
    expect(await countAccounts(app, wrong.name)).toBe(0);
  });

  it('re-links in place: same id, new tokens, no longer needing re-linking', async () => {
    const first = await callback(app, (await authorize(basicApp.name, 'bob')).searchParams);
    expect(first.status).toBe(200);
    const before = await storedAccount(app, first.body.id);
    // As the execution path marks it when the provider refuses the refresh token.
    await app.dataSource.getRepository(LinkedAccountEntity).update({ id: first.body.id }, { needs_relink: true });

    const again = await callback(app, (await authorize(basicApp.name, 'bob')).searchParams);
    expect(again.status, again.text).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.created_at).toBe(first.body.created_at);
    expect(Date.parse(again.body.updated_at)).toBeGreaterThan(Date.parse(first.body.updated_at));

    const after = await storedAccount(app, first.body.id);
    expect(after.row.needs_relink).toBe(false);
    expect(after.credentials.access_token).not.toBe(before.credentials.access_token);
    expect(after.credentials.refresh_token).not.toBe(before.credentials.refresh_token);
    const owned = await app.get('/v1/linked-accounts', {
      apiKey: project.apiKey,
      query: { app_name: basicApp.name, linked_account_owner_id: 'bob' },
    });
    expect(owned.body).toHaveLength(1);
  });

  it('accepts a state once: the same callback again is refused without asking the provider', async () => {
    const back = await authorize(basicApp.name, 'carol');
    expect((await callback(app, back.searchParams)).status).toBe(200);
    const sent = oidc.tokenRequests.length;
    const replay = await callback(app, back.searchParams);
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({ error: 'Unknown or already used OAuth 2.0 state: start linking again' });
    expect(oidc.tokenRequests).toHaveLength(sent);
  });

  it('lets exactly one of two simultaneous callbacks with the same state through', async () => {
    const back = await authorize(basicApp.name, 'dave');
    const sent = oidc.tokenRequests.length;
    const results = await Promise.all([callback(app, back.searchParams), callback(app, back.searchParams)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(oidc.tokenRequests).toHaveLength(sent + 1);
    expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ linked_account_owner_id: 'dave' })).toBe(
      1,
    );
  });

  it('refuses an expired flow (10 minutes) without asking the provider', async () => {
    const back = await authorize(basicApp.name, 'erin');
    await states().update(
      { state_hash: hash(back.searchParams.get('state') as string) },
      {
        expires_at: new Date(Date.now() - 1000),
      },
    );
    const sent = oidc.tokenRequests.length;
    const res = await callback(app, back.searchParams);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'The OAuth 2.0 linking flow expired (10 minutes): start linking again' });
    expect(oidc.tokenRequests).toHaveLength(sent);
    expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ linked_account_owner_id: 'erin' })).toBe(
      0,
    );
  });

  it('refuses a forged or missing state', async () => {
    const back = await authorize(basicApp.name, 'frank');
    const forged = new URLSearchParams(back.searchParams);
    forged.set('state', 'forged-state-value-that-was-never-issued-by-us');
    let res = await callback(app, forged);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Unknown or already used OAuth 2.0 state: start linking again');

    res = await callback(app, { code: back.searchParams.get('code') as string });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'The OAuth 2.0 callback has no state parameter' });
    expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ linked_account_owner_id: 'frank' })).toBe(
      0,
    );
  });

  it('fails when the code is redeemed with another verifier: the provider enforces PKCE', async () => {
    const back = await authorize(basicApp.name, 'grace');
    const box = app.app.get(SecretBox);
    await states().update(
      { state_hash: hash(back.searchParams.get('state') as string) },
      {
        code_verifier: box.seal('a-verifier-that-does-not-match-the-challenge-sent-at-start-0123'),
      },
    );
    const sent = oidc.tokenRequests.length;
    const res = await callback(app, back.searchParams);
    expect(oidc.tokenRequests[sent]).toMatchObject({ status: 400, response: { error: 'invalid_grant' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^The OAuth 2.0 token endpoint refused the authorization code: invalid_grant/);
    expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ linked_account_owner_id: 'grace' })).toBe(
      0,
    );
  });

  it("carries the provider's error when the user refuses consent, and uses the state up", async () => {
    const back = await authorize(basicApp.name, 'heidi', { deny: true });
    expect(back.searchParams.get('error')).toBe('access_denied');
    const sent = oidc.tokenRequests.length;
    const res = await callback(app, back.searchParams);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'The OAuth 2.0 provider refused the authorization: access_denied (End-User aborted interaction)',
    });
    expect(oidc.tokenRequests).toHaveLength(sent);
    expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ linked_account_owner_id: 'heidi' })).toBe(
      0,
    );
    expect((await callback(app, back.searchParams)).body.error).toContain('Unknown or already used');
  });

  it('refuses a callback with a state but neither code nor error', async () => {
    const back = await authorize(basicApp.name, 'ivan');
    const res = await callback(app, { state: back.searchParams.get('state') as string });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'The OAuth 2.0 callback has neither a code nor an error' });
  });

  it('refuses when the configuration changed its client during the flow', async () => {
    const changing = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme({ token_endpoint_auth_method: 'client_secret_post' }),
      override: { client_id: postClient.client_id, client_secret: postClient.client_secret },
    });
    const back = await authorize(changing.name, 'judy');
    await app.patch(
      `/v1/app-configurations/${changing.name}`,
      { security_scheme_overrides: { oauth2: { client_id: 'another-client', client_secret: 'another-secret' } } },
      { apiKey: project.apiKey },
    );
    const res = await callback(app, back.searchParams);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(
      `The app configuration for ${changing.name} changed its OAuth 2.0 client during linking: start linking again`,
    );
  });

  describe('with after_oauth2_link_redirect_url', () => {
    it('redirects there with linked_account_id and status=success', async () => {
      const back = await authorize(basicApp.name, 'kim', { after: AFTER });
      const res = await callback(app, back.searchParams);
      expect(res.status).toBe(302);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const location = new URL(res.headers.get('location') as string);
      expect(`${location.origin}${location.pathname}`).toBe('https://app.example.com/integrations');
      const accounts = await app.get('/v1/linked-accounts', {
        apiKey: project.apiKey,
        query: { app_name: basicApp.name, linked_account_owner_id: 'kim' },
      });
      expect(Object.fromEntries(location.searchParams)).toEqual({
        tab: 'calendar',
        linked_account_id: accounts.body[0].id,
        status: 'success',
      });
    });

    it('redirects there with status=error and the error when linking fails', async () => {
      const back = await authorize(basicApp.name, 'leo', { after: AFTER, deny: true });
      const res = await callback(app, back.searchParams);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location') as string);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        tab: 'calendar',
        status: 'error',
        error: 'access_denied',
        error_description:
          'The OAuth 2.0 provider refused the authorization: access_denied (End-User aborted interaction)',
      });
      expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ linked_account_owner_id: 'leo' })).toBe(
        0,
      );
    });

    it('redirects with status=error for an expired flow, and answers 400 for an unknown state (nowhere to go)', async () => {
      const back = await authorize(basicApp.name, 'mia', { after: AFTER });
      await states().update(
        { state_hash: hash(back.searchParams.get('state') as string) },
        {
          expires_at: new Date(Date.now() - 1000),
        },
      );
      const res = await callback(app, back.searchParams);
      expect(res.status).toBe(302);
      expect(new URL(res.headers.get('location') as string).searchParams.get('error')).toBe('expired_state');
      const replay = await callback(app, back.searchParams);
      expect(replay.status).toBe(400);
      expect(replay.headers.get('location')).toBeNull();
    });
  });

  describe('for a browser asking for text/html', () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

    it('shows a page saying the account is linked', async () => {
      const back = await authorize(basicApp.name, 'nina');
      const res = await callback(app, back.searchParams, html);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(res.text).toContain('<h1>Account linked</h1>');
      expect(res.text).toContain(`Your ${basicApp.display_name} account is now linked.`);
    });

    it('shows what went wrong, with the provider text escaped', async () => {
      const back = await authorize(basicApp.name, 'olga');
      const res = await callback(
        app,
        {
          state: back.searchParams.get('state') as string,
          error: 'access_denied',
          error_description: '<script>alert(1)</script>',
        },
        html,
      );
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('<h1>Linking failed</h1>');
      // Plain words first; the code and the provider's text (escaped) only as details for support.
      expect(res.text).toContain('You declined access, so nothing was linked.');
      expect(res.text).toContain('access_denied (&#60;script&#62;alert(1)&#60;/script&#62;)');
      expect(res.text).not.toContain('<script>');
    });
  });

  it('answers 502 when the token endpoint cannot be reached', async () => {
    const unreachable = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme({ client_id: 'basic-client', access_token_url: 'http://127.0.0.1:9/token' }),
      appClientSecret: 'basic-secret',
    });
    const url = await startLinking(app, project.apiKey, {
      app_name: unreachable.name,
      linked_account_owner_id: 'pat',
    });
    const res = await callback(app, { state: stateOf(url), code: 'some-code' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      error: 'The OAuth 2.0 token endpoint at http://127.0.0.1:9 did not answer (connection failed or timed out)',
    });
    expect(await countAccounts(app, unreachable.name)).toBe(0);
  });
});
