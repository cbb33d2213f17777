import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { OAuth2Credentials } from '../../../src/linked-accounts/credentials.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { executionScenario, openCredentials, type ScenarioOptions } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { json, type Received, Upstream } from './upstream.js';

const now = () => Math.floor(Date.now() / 1000);

/** The oauth2 strategy: token injection, refresh before expiry (single-flight, row-locked), invalid_grant. */
describe('POST /v1/functions/{function_name}/execute with OAuth 2.0', () => {
  let app: TestApp;
  let api: Upstream;
  let provider: Upstream;
  let projectId: string;
  let issued = 0;

  const settings = (extra: Record<string, unknown> = {}) => ({
    location: 'header',
    name: 'Authorization',
    prefix: 'Bearer',
    client_id: 'app-client',
    scope: 'read write',
    authorize_url: `${provider.url}/authorize`,
    access_token_url: `${provider.url}/token`,
    refresh_token_url: `${provider.url}/refresh`,
    ...extra,
  });

  const scenario = (credentials: Partial<OAuth2Credentials>, options: Partial<ScenarioOptions> = {}) =>
    executionScenario(app, {
      projectId,
      scheme: 'oauth2',
      settings: settings(),
      appSecrets: { oauth2_client_secret: 'app-secret' },
      credentials,
      function: {
        protocol: 'rest',
        protocol_data: { method: 'GET', path: '/me', server_url: api.url },
        parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
      },
      ...options,
    });

  /** A token endpoint that rotates tokens, answering after a pause so that concurrent callers overlap. */
  const rotating = (delayMs = 150) =>
    provider.respond(async (_request, response) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      issued += 1;
      json(response, 200, {
        access_token: `new-at-${issued}`,
        token_type: 'Bearer',
        expires_in: 3600,
        refresh_token: `new-rt-${issued}`,
      });
    });

  const stored = async (id: string) => {
    const row = await app.dataSource.getRepository(LinkedAccountEntity).findOneByOrFail({ id });
    return { row, credentials: openCredentials<OAuth2Credentials>(app, row.credentials) };
  };

  const form = (request: Received) => Object.fromEntries(new URLSearchParams(request.body));

  beforeAll(async () => {
    app = await TestApp.start();
    api = await Upstream.start();
    provider = await Upstream.start();
    projectId = (await app.ctx.newProject()).projectId;
  });

  afterAll(async () => {
    await api.close();
    await provider.close();
    await app.close();
  });

  beforeEach(() => {
    api.reset();
    provider.reset();
    rotating(0);
  });

  it('uses a token that is not about to expire without refreshing it', async () => {
    const s = await scenario({ access_token: 'at-ok', refresh_token: 'rt', expires_at: now() + 600 });
    const res = await s.execute();
    expect(res.body).toEqual({ success: true, data: { ok: true }, error: null });
    expect(api.last.headers.authorization).toBe('Bearer at-ok');
    expect(provider.received).toHaveLength(0);
  });

  it('uses a token without an expiry as is', async () => {
    const s = await scenario({ access_token: 'at-forever' });
    await s.execute();
    expect(api.last.headers.authorization).toBe('Bearer at-forever');
    expect(provider.received).toHaveLength(0);
  });

  it('refreshes a token expiring within 60 s first (client_secret_basic), stores the rotated tokens, then calls', async () => {
    const s = await scenario({
      access_token: 'at-old',
      refresh_token: 'rt-old',
      expires_at: now() + 30,
      scope: 'read',
    });
    const res = await s.execute();
    expect(res.body.success).toBe(true);

    expect(provider.received).toHaveLength(1);
    const refresh = provider.last;
    expect(refresh.method).toBe('POST');
    expect(refresh.url).toBe('/refresh');
    expect(refresh.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
    expect(refresh.headers.accept).toBe('application/json');
    // RFC 6749 §2.3.1: the id and secret are form-urlencoded first (openid-client encodes '-' too, as at linking).
    expect(refresh.headers.authorization).toBe(`Basic ${Buffer.from('app%2Dclient:app%2Dsecret').toString('base64')}`);
    expect(form(refresh)).toEqual({ grant_type: 'refresh_token', refresh_token: 'rt-old' });

    const token = `new-at-${issued}`;
    expect(api.last.headers.authorization).toBe(`Bearer ${token}`);
    const { credentials } = await stored(s.account.id);
    expect(credentials).toEqual({
      access_token: token,
      refresh_token: `new-rt-${issued}`,
      expires_at: expect.any(Number),
      scope: 'read',
      // Normalised as at linking: RFC 6749 token types are case-insensitive.
      token_type: 'bearer',
    });
    expect(credentials.expires_at).toBeGreaterThanOrEqual(now() + 3590);

    // The refreshed token serves the next calls.
    await s.execute();
    expect(provider.received).toHaveLength(1);
    expect(api.last.headers.authorization).toBe(`Bearer ${token}`);
  });

  it('refreshes an already expired token, with client_secret_post, keeping a refresh token that was not rotated', async () => {
    provider.respondJson(200, { access_token: 'post-at', token_type: 'bearer', expires_in: '120' });
    const s = await scenario(
      { access_token: 'at-old', refresh_token: 'rt-keep', expires_at: now() - 100 },
      { settings: settings({ token_endpoint_auth_method: 'client_secret_post' }) },
    );
    const res = await s.execute();
    expect(res.body.success).toBe(true);
    expect(provider.last.headers.authorization).toBeUndefined();
    expect(form(provider.last)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'rt-keep',
      client_id: 'app-client',
      client_secret: 'app-secret',
    });
    expect(api.last.headers.authorization).toBe('Bearer post-at');
    const { credentials } = await stored(s.account.id);
    expect(credentials.refresh_token).toBe('rt-keep');
    expect(credentials.expires_at).toBeGreaterThanOrEqual(now() + 110);
  });

  it("refreshes with the project's own client when its configuration overrides the app's", async () => {
    const s = await scenario(
      { access_token: 'at-old', refresh_token: 'rt-old', expires_at: now() + 10 },
      {
        configuration: {
          security_scheme_overrides: { oauth2: { client_id: 'project-client' } },
          oauth2ClientSecret: 'project-secret',
        },
      },
    );
    await s.execute();
    expect(provider.last.headers.authorization).toBe(
      `Basic ${Buffer.from('project%2Dclient:project%2Dsecret').toString('base64')}`,
    );
  });

  it('finds the tokens where token_response_path says the provider nests them', async () => {
    provider.respondJson(200, { ok: true, authed_user: { access_token: 'nested-at', expires_in: 600 } });
    const s = await scenario(
      { access_token: 'at-old', refresh_token: 'rt-old', expires_at: now() + 10 },
      { settings: settings({ token_response_path: 'authed_user' }) },
    );
    await s.execute();
    expect(api.last.headers.authorization).toBe('Bearer nested-at');
  });

  it('refreshes once for 50 concurrent executions of one account', async () => {
    rotating(200);
    const s = await scenario({ access_token: 'at-old', refresh_token: 'rt-old', expires_at: now() + 5 });
    const results = await Promise.all(Array.from({ length: 50 }, () => s.execute()));
    expect(results.map((r) => r.body.success)).toEqual(Array(50).fill(true));
    expect(provider.received).toHaveLength(1);
    const token = `new-at-${issued}`;
    expect(api.received).toHaveLength(50);
    expect(new Set(api.received.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${token}`]));
  });

  // Instances share a PostgreSQL server; the embedded database belongs to exactly one process.
  it.runIf(inject('databaseTemplate').kind === 'server')(
    'refreshes once for concurrent executions spread over two instances sharing the database',
    async () => {
      rotating(200);
      const s = await scenario({ access_token: 'at-old', refresh_token: 'rt-old', expires_at: now() + 5 });
      const second = await app.startAnotherInstance();
      try {
        const key = app.ctx.defaultApiKey as string;
        const viaSecond = () =>
          fetch(`${second.url}/v1/functions/${s.fn.name}/execute`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            body: JSON.stringify({ linked_account_owner_id: s.owner }),
          }).then(async (r) => (await r.json()) as { success: boolean });
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) => (i % 2 ? viaSecond() : s.execute().then((r) => r.body))),
        );
        expect(results.filter((r) => !r.success)).toEqual([]);
        expect(provider.received).toHaveLength(1);
        expect(new Set(api.received.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer new-at-${issued}`]));
      } finally {
        await second.app.close();
      }
    },
  );

  it('marks the account as needing re-linking when the provider answers invalid_grant', async () => {
    provider.respondJson(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
    const s = await scenario({ access_token: 'at-old', refresh_token: 'rt-revoked', expires_at: now() - 1 });
    const res = await s.execute();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: false,
      data: null,
      error:
        'The OAuth 2.0 provider refused the refresh token (invalid_grant). ' +
        `The linked account of app ${s.app.name} for owner ${s.owner} needs re-linking: ` +
        'link it again through the OAuth 2.0 flow.',
    });
    expect(api.received).toHaveLength(0);
    const { row, credentials } = await stored(s.account.id);
    expect(row.needs_relink).toBe(true);
    expect(credentials.refresh_token).toBe('rt-revoked');

    const again = await s.execute();
    expect(again.body.success).toBe(false);
    expect(again.body.error).toContain('needs re-linking');
    expect(provider.received).toHaveLength(1);
    expect(api.received).toHaveLength(0);
  });

  it("treats GitHub's 200 bad_refresh_token answer like invalid_grant", async () => {
    provider.respondJson(200, {
      error: 'bad_refresh_token',
      error_description: 'The refresh token passed is incorrect.',
    });
    const s = await scenario({ access_token: 'at-old', refresh_token: 'rt-bad', expires_at: now() + 1 });
    const res = await s.execute();
    expect(res.body.error).toContain('needs re-linking');
    expect((await stored(s.account.id)).row.needs_relink).toBe(true);
  });

  it('does not mark the account on a transient refresh failure, and tries again on the next call', async () => {
    provider.respondJson(503, { error: 'temporarily_unavailable' });
    const s = await scenario({ access_token: 'at-old', refresh_token: 'rt-old', expires_at: now() + 20 });
    const res = await s.execute();
    expect(res.body).toEqual({
      success: false,
      data: null,
      error:
        'Refreshing the OAuth 2.0 access token failed: the token endpoint answered HTTP 503 (temporarily_unavailable)',
    });
    expect((await stored(s.account.id)).row.needs_relink).toBe(false);
    expect(api.received).toHaveLength(0);

    rotating(0);
    const retried = await s.execute();
    expect(retried.body.success).toBe(true);
    expect(provider.received).toHaveLength(2);
  });

  it('asks for re-linking when the token has expired and there is no refresh token', async () => {
    const s = await scenario({ access_token: 'at-old', expires_at: now() - 5 });
    const res = await s.execute();
    expect(res.body.success).toBe(false);
    expect(res.body.error).toBe(
      'The OAuth 2.0 access token has expired and there is no refresh token. ' +
        `The linked account of app ${s.app.name} for owner ${s.owner} needs re-linking: ` +
        'link it again through the OAuth 2.0 flow.',
    );
    expect(provider.received).toHaveLength(0);
  });

  it('says so when there is no client secret to refresh with', async () => {
    const s = await scenario(
      { access_token: 'at-old', refresh_token: 'rt-old', expires_at: now() + 1 },
      { appSecrets: {} },
    );
    const res = await s.execute();
    expect(res.body.success).toBe(false);
    expect(res.body.error).toContain(`app ${s.app.name} has no OAuth 2.0 client credentials`);
    expect(provider.received).toHaveLength(0);
  });

  it.each([
    ['the catalogue secret', 'client secret'],
    ['the catalogue client id', 'client id'],
  ])('refuses to refresh with an unfilled placeholder as %s, as linking does', async (_what, missing) => {
    const options: Partial<ScenarioOptions> =
      missing === 'client id'
        ? { settings: settings({ client_id: '{{DEMO_CLIENT_ID}}' }) }
        : { appSecrets: { oauth2_client_secret: '{{DEMO_CLIENT_SECRET}}' } };
    const s = await scenario({ access_token: 'at-old', refresh_token: 'rt-old', expires_at: now() + 1 }, options);
    const res = await s.execute();
    expect(res.body.success).toBe(false);
    expect(res.body.error).toContain(`App ${s.app.name} has no OAuth 2.0 ${missing}`);
    expect(res.text).not.toContain('{{');
    expect(provider.received).toHaveLength(0);
  });

  it('never shows tokens or the client secret in an error', async () => {
    provider.respond((request, response) =>
      json(response, 500, { echo: request.body, auth: request.headers.authorization }),
    );
    const s = await scenario({ access_token: 'at-secret-1', refresh_token: 'rt-secret-2', expires_at: now() + 1 });
    const res = await s.execute();
    expect(res.body.success).toBe(false);
    for (const secret of ['at-secret-1', 'rt-secret-2', 'app-secret']) {
      expect(res.text).not.toContain(secret);
    }
  });
});
