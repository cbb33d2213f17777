import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { loadAppFolders } from '../../../src/catalog/catalog-files.js';
import { OAuth2StateEntity } from '../../../src/oauth2/oauth2-state.entity.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { newOAuth2App } from './linking.js';

const PUBLIC_BASE_URL = 'http://patchbay.test';
const DEFAULT_REDIRECT = `${PUBLIC_BASE_URL}/v1/linked-accounts/oauth2/callback`;

const scheme = (extra: Record<string, unknown> = {}) => ({
  location: 'header',
  name: 'Authorization',
  prefix: 'Bearer',
  client_id: 'app-client',
  scope: 'calendar.read calendar.write',
  // The provider's own query parameters must survive (Atlassian puts some in its authorize URL).
  authorize_url: 'https://auth.example.com/oauth/authorize?audience=api.example.com',
  access_token_url: 'https://auth.example.com/oauth/token',
  refresh_token_url: 'https://auth.example.com/oauth/token',
  ...extra,
});

describe('GET /v1/linked-accounts/oauth2', () => {
  let app: TestApp;
  let project: TestProject;

  const start = (query: Record<string, string | undefined>, apiKey: string | null = project.apiKey) =>
    app.get('/v1/linked-accounts/oauth2', { apiKey, query });

  const stateRow = (state: string) =>
    app.dataSource
      .getRepository(OAuth2StateEntity)
      .findOneByOrFail({ state_hash: createHash('sha256').update(state).digest('hex') });

  beforeAll(async () => {
    app = await TestApp.start({
      PUBLIC_BASE_URL,
      OAUTH2_REDIRECT_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:3000/ignored/path, not a url',
    });
    project = await app.ctx.newProject();
  });

  afterAll(() => app.close());

  it("returns the provider's authorization URL for the app's client, with PKCE S256 and an opaque state", async () => {
    const row = await newOAuth2App(app, project.apiKey, {
      scheme: scheme({ authorize_params: { access_type: 'offline', prompt: 'consent' } }),
      appClientSecret: 'app-secret',
    });
    const before = Date.now();
    const res = await start({ app_name: row.name, linked_account_owner_id: 'user-1' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['url']);

    const url = new URL(res.body.url);
    expect(`${url.origin}${url.pathname}`).toBe('https://auth.example.com/oauth/authorize');
    const params = Object.fromEntries(url.searchParams);
    expect(params).toEqual({
      audience: 'api.example.com',
      access_type: 'offline',
      prompt: 'consent',
      response_type: 'code',
      client_id: 'app-client',
      redirect_uri: DEFAULT_REDIRECT,
      scope: 'calendar.read calendar.write',
      state: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge_method: 'S256',
    });

    // Everything but the state stays on the server; the state itself only as its hash.
    const stored = await stateRow(params.state);
    expect(stored).toMatchObject({
      project_id: project.projectId,
      app_name: row.name,
      linked_account_owner_id: 'user-1',
      client_id: 'app-client',
      redirect_uri: DEFAULT_REDIRECT,
      scope: 'calendar.read calendar.write',
      after_redirect_url: null,
    });
    const verifier = app.app.get(SecretBox).open(stored.code_verifier);
    expect(stored.code_verifier).not.toContain(verifier);
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(params.code_challenge);
    expect(JSON.stringify(stored)).not.toContain(params.state);
    const ttl = stored.expires_at.getTime() - before;
    expect(ttl).toBeGreaterThan(10 * 60 * 1000 - 5000);
    expect(ttl).toBeLessThanOrEqual(10 * 60 * 1000 + 1000);
  });

  it('starts a new flow with a fresh state and verifier every time', async () => {
    const row = await newOAuth2App(app, project.apiKey, { scheme: scheme(), appClientSecret: 'app-secret' });
    const query = { app_name: row.name, linked_account_owner_id: 'user-1' };
    const [a, b] = [new URL((await start(query)).body.url), new URL((await start(query)).body.url)];
    expect(a.searchParams.get('state')).not.toBe(b.searchParams.get('state'));
    expect(a.searchParams.get('code_challenge')).not.toBe(b.searchParams.get('code_challenge'));
  });

  it("uses the configuration's client, scope and redirect URL over the app's", async () => {
    const row = await newOAuth2App(app, project.apiKey, {
      scheme: scheme({ redirect_url: 'https://catalogue.example.com/callback' }),
      appClientSecret: 'app-secret',
      override: {
        client_id: 'project-client',
        client_secret: 'project-secret',
        redirect_url: 'https://patchbay.example.org/v1/linked-accounts/oauth2/callback',
        scope: 'calendar.read',
      },
    });
    const res = await start({ app_name: row.name, linked_account_owner_id: 'user-2' });
    expect(res.status).toBe(200);
    const params = new URL(res.body.url).searchParams;
    expect(params.get('client_id')).toBe('project-client');
    expect(params.get('scope')).toBe('calendar.read');
    expect(params.get('redirect_uri')).toBe('https://patchbay.example.org/v1/linked-accounts/oauth2/callback');
    expect((await stateRow(params.get('state') as string)).client_id).toBe('project-client');
  });

  it("uses the catalogue's redirect URL when the configuration sets none, and omits an empty scope", async () => {
    const row = await newOAuth2App(app, project.apiKey, {
      scheme: scheme({ redirect_url: 'https://catalogue.example.com/callback', scope: '' }),
      appClientSecret: 'app-secret',
    });
    const params = new URL((await start({ app_name: row.name, linked_account_owner_id: 'u' })).body.url).searchParams;
    expect(params.get('redirect_uri')).toBe('https://catalogue.example.com/callback');
    expect(params.has('scope')).toBe(false);
  });

  it('accepts after_oauth2_link_redirect_url on the public origin and on the allowed ones, and keeps it server-side', async () => {
    const row = await newOAuth2App(app, project.apiKey, { scheme: scheme(), appClientSecret: 'app-secret' });
    for (const target of [
      `${PUBLIC_BASE_URL}/done`,
      'https://app.example.com/settings?tab=integrations',
      'http://localhost:3000/linked',
    ]) {
      const res = await start({
        app_name: row.name,
        linked_account_owner_id: 'user-3',
        after_oauth2_link_redirect_url: target,
      });
      expect(res.status, target).toBe(200);
      const params = new URL(res.body.url).searchParams;
      expect(res.body.url).not.toContain(encodeURIComponent(target));
      expect((await stateRow(params.get('state') as string)).after_redirect_url).toBe(target);
    }
  });

  it('refuses a redirect URL outside the allowed origins with 400, storing nothing', async () => {
    const row = await newOAuth2App(app, project.apiKey, { scheme: scheme(), appClientSecret: 'app-secret' });
    const count = await app.dataSource.getRepository(OAuth2StateEntity).count();
    for (const target of [
      'https://evil.example.net/steal',
      'https://app.example.com.evil.example.net/',
      'http://app.example.com/', // scheme is part of the origin
      'https://app.example.com:8443/',
    ]) {
      const res = await start({
        app_name: row.name,
        linked_account_owner_id: 'user-4',
        after_oauth2_link_redirect_url: target,
      });
      expect(res.status, target).toBe(400);
      expect(res.body.error).toContain(`origin ${new URL(target).origin}, which is not allowed`);
      expect(res.body.error).toContain('OAUTH2_REDIRECT_ALLOWED_ORIGINS');
    }
    expect(await app.dataSource.getRepository(OAuth2StateEntity).count()).toBe(count);
  });

  it('answers 422 for missing, too long or malformed input', async () => {
    let res = await start({});
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([
      ['query', 'app_name'],
      ['query', 'linked_account_owner_id'],
    ]);

    res = await start({ app_name: 'X', linked_account_owner_id: 'o'.repeat(256) });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['query', 'linked_account_owner_id'],
        msg: 'String should have at most 255 characters',
        type: 'string_too_long',
      },
    ]);

    for (const target of ['not a url', 'javascript:alert(1)', 'ftp://app.example.com/x']) {
      res = await start({ app_name: 'X', linked_account_owner_id: 'o', after_oauth2_link_redirect_url: target });
      expect(res.status, target).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        loc: ['query', 'after_oauth2_link_redirect_url'],
        type: 'url_parsing',
      });
    }
  });

  it('answers 404 for an unknown app and for an app the project has not configured', async () => {
    let res = await start({ app_name: 'NO_SUCH_APP', linked_account_owner_id: 'o' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'App NO_SUCH_APP not found' });

    const row = await newOAuth2App(app, project.apiKey, { scheme: scheme(), appClientSecret: 'app-secret' });
    const other = await app.ctx.newProject('other');
    res = await start({ app_name: row.name, linked_account_owner_id: 'o' }, other.apiKey);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: `App configuration for ${row.name} not found in this project` });
  });

  it('answers 400 when the configuration uses another scheme', async () => {
    const row = await app.ctx.newApp({
      security_schemes: { api_key: { location: 'header', name: 'X-Key' }, oauth2: scheme() },
    });
    await app.post(
      '/v1/app-configurations',
      { app_name: row.name, security_scheme: 'api_key' },
      { apiKey: project.apiKey },
    );
    const res = await start({ app_name: row.name, linked_account_owner_id: 'o' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(
      `App configuration for ${row.name} uses security scheme api_key; cannot link an account with security scheme oauth2`,
    );
  });

  it('answers 400 naming what to set when no client id or secret is available', async () => {
    // An unfilled catalogue placeholder leaves the client id null.
    let row = await newOAuth2App(app, project.apiKey, { scheme: scheme({ client_id: null }) });
    let res = await start({ app_name: row.name, linked_account_owner_id: 'o' });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(`App ${row.name} has no OAuth 2.0 client id`);
    expect(res.body.error).toContain('security_scheme_overrides.oauth2.client_id and client_secret');
    expect(res.body.error).toContain(`PATCH /v1/app-configurations/${row.name}`);

    row = await newOAuth2App(app, project.apiKey, { scheme: scheme() });
    res = await start({ app_name: row.name, linked_account_owner_id: 'o' });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(`App ${row.name} has no OAuth 2.0 client secret`);

    // The project's own client makes the same app linkable.
    const patched = await app.patch(
      `/v1/app-configurations/${row.name}`,
      { security_scheme_overrides: { oauth2: { client_id: 'mine', client_secret: 'mine-secret' } } },
      { apiKey: project.apiKey },
    );
    expect(patched.status).toBe(200);
    res = await start({ app_name: row.name, linked_account_owner_id: 'o' });
    expect(res.status).toBe(200);
    expect(new URL(res.body.url).searchParams.get('client_id')).toBe('mine');
  });

  it('refuses plain-http provider endpoints except on loopback addresses', async () => {
    let row = await newOAuth2App(app, project.apiKey, {
      scheme: scheme({ access_token_url: 'http://auth.example.com/token' }),
      appClientSecret: 'app-secret',
    });
    let res = await start({ app_name: row.name, linked_account_owner_id: 'o' });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('access_token_url that is neither https nor http on a loopback address');

    row = await newOAuth2App(app, project.apiKey, {
      scheme: scheme({ authorize_url: 'http://127.0.0.1:9/auth', access_token_url: 'http://localhost:9/token' }),
      appClientSecret: 'app-secret',
    });
    res = await start({ app_name: row.name, linked_account_owner_id: 'o' });
    expect(res.status).toBe(200);
  });

  it('needs the API key', async () => {
    const res = await start({ app_name: 'X', linked_account_owner_id: 'o' }, null);
    expect(res.status).toBe(401);
  });

  it('is routed before /v1/linked-accounts/{linked_account_id}, which keeps working', async () => {
    // The static segment wins: a 422 about the query, not about a malformed uuid in the path.
    const res = await start({});
    expect(res.body.detail[0].loc[0]).toBe('query');
    const callback = await app.get('/v1/linked-accounts/oauth2/callback', { apiKey: null });
    expect(callback.status).toBe(400);
    const id = randomUUID();
    const byId = await app.get(`/v1/linked-accounts/${id}`, { apiKey: project.apiKey });
    expect(byId.status).toBe(404);
    expect(byId.body).toEqual({ error: `Linked account ${id} not found` });
    const malformed = await app.get('/v1/linked-accounts/oauth3', { apiKey: project.apiKey });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['path', 'linked_account_id']);
  });
});

describe('catalogue option authorize_params', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'patchbay-oauth2-'));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const appFolder = (name: string, authorizeParams: unknown) => {
    const folder = join(dir, name.toLowerCase());
    mkdirSync(folder);
    const app = JSON.parse(readFileSync('test/fixtures/catalog/valid/oauth_demo/app.json', 'utf8'));
    app.name = name;
    app.security_schemes.oauth2.authorize_params = authorizeParams;
    writeFileSync(join(folder, 'app.json'), JSON.stringify(app));
    writeFileSync(join(folder, 'functions.json'), '[]');
    return folder;
  };

  it('accepts extra string parameters and refuses ones that would replace the flow parameters', () => {
    expect(loadAppFolders([appFolder('GOOD_PARAMS', { access_type: 'offline' })], {}).problems).toEqual([]);
    const { problems } = loadAppFolders(
      [appFolder('FLOW_PARAMS', { state: 'fixed' }), appFolder('NUMBER_PARAMS', { retries: 3 })],
      {},
    );
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining([
        '/security_schemes/oauth2/authorize_params',
        '/security_schemes/oauth2/authorize_params/retries',
      ]),
    );
  });

  it('asks Google for offline access in the starter catalogue', () => {
    const google = JSON.parse(readFileSync('src/catalog/starter/google_calendar/app.json', 'utf8'));
    expect(google.security_schemes.oauth2.authorize_params).toEqual({ access_type: 'offline', prompt: 'consent' });
    expect(loadAppFolders(['src/catalog/starter/google_calendar'], {}).problems).toEqual([]);
  });
});
