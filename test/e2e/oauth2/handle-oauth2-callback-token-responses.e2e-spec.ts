import type { IncomingHttpHeaders } from 'node:http';
import { OAuth2Server, type MutableResponse } from 'oauth2-mock-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { callback, countAccounts, newOAuth2App, nowSeconds, startLinking, storedAccount } from './linking.js';

const PUBLIC_BASE_URL = 'http://patchbay.test';
const REDIRECT_URI = `${PUBLIC_BASE_URL}/v1/linked-accounts/oauth2/callback`;

interface Received {
  headers: IncomingHttpHeaders;
  form: Record<string, string>;
}

/**
 * The callback against a lenient authorization server (oauth2-mock-server) whose token answers the
 * tests shape: client authentication as seen on the wire, and providers' non-standard answers handled
 * through the scheme's options.
 */
describe('GET /v1/linked-accounts/oauth2/callback with non-standard token responses', () => {
  let app: TestApp;
  let provider: OAuth2Server;
  let project: TestProject;
  let received: Received[];
  let shape: (response: MutableResponse) => void;

  const scheme = (extra: Record<string, unknown> = {}) => ({
    location: 'header',
    name: 'Authorization',
    prefix: 'Bearer',
    client_id: 'mock-client',
    scope: 'read write',
    authorize_url: `${provider.issuer.url}/authorize`,
    access_token_url: `${provider.issuer.url}/token`,
    refresh_token_url: `${provider.issuer.url}/token`,
    ...extra,
  });

  /** Creates the app, starts linking, lets the provider redirect back and calls the callback with its query. */
  const link = async (settings: Record<string, unknown>, owner: string, after?: string) => {
    const row = await newOAuth2App(app, project.apiKey, { scheme: scheme(settings), appClientSecret: 'mock-secret' });
    const url = await startLinking(app, project.apiKey, {
      app_name: row.name,
      linked_account_owner_id: owner,
      ...(after ? { after_oauth2_link_redirect_url: after } : {}),
    });
    const answer = await fetch(url, { redirect: 'manual' });
    const back = new URL(answer.headers.get('location') as string);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    return { row, res: await callback(app, back.searchParams) };
  };

  beforeAll(async () => {
    app = await TestApp.start({ PUBLIC_BASE_URL, OAUTH2_REDIRECT_ALLOWED_ORIGINS: 'https://app.example.com' });
    project = await app.ctx.newProject();
    provider = new OAuth2Server();
    await provider.issuer.keys.generate('RS256');
    await provider.start(0, '127.0.0.1');
    provider.service.on('beforeResponse', (response: MutableResponse, request: Received & { body: unknown }) => {
      received.push({ headers: request.headers, form: { ...(request.body as Record<string, string>) } });
      shape(response);
    });
  });

  afterAll(async () => {
    await provider.stop();
    await app.close();
  });

  beforeEach(() => {
    received = [];
    shape = () => undefined;
  });

  it('sends the client in the Basic header for client_secret_basic (the default)', async () => {
    const { res } = await link({}, 'wire-basic');
    expect(res.status, res.text).toBe(200);
    expect(received).toHaveLength(1);
    const [{ headers, form }] = received;
    const [kind, encoded] = (headers.authorization ?? '').split(' ');
    expect(kind).toBe('Basic');
    expect(Buffer.from(encoded, 'base64').toString('utf8').split(':').map(decodeURIComponent)).toEqual([
      'mock-client',
      'mock-secret',
    ]);
    expect(form).toEqual({
      grant_type: 'authorization_code',
      code: expect.any(String),
      code_verifier: expect.stringMatching(/^[\w-]{43}$/),
      redirect_uri: REDIRECT_URI,
    });
  });

  it('sends the client in the form for client_secret_post, and no Authorization header', async () => {
    const { res } = await link({ token_endpoint_auth_method: 'client_secret_post' }, 'wire-post');
    expect(res.status, res.text).toBe(200);
    const [{ headers, form }] = received;
    expect(headers.authorization).toBeUndefined();
    expect(form).toEqual({
      grant_type: 'authorization_code',
      code: expect.any(String),
      code_verifier: expect.stringMatching(/^[\w-]{43}$/),
      redirect_uri: REDIRECT_URI,
      client_id: 'mock-client',
      client_secret: 'mock-secret',
    });
  });

  it('stores no expiry and no refresh token when the provider gives none, and the requested scope as granted', async () => {
    shape = (response) => {
      response.body = { access_token: 'forever-token', token_type: 'bearer' };
    };
    const { res } = await link({}, 'no-expiry');
    expect(res.status, res.text).toBe(200);
    expect((await storedAccount(app, res.body.id)).credentials).toEqual({
      access_token: 'forever-token',
      scope: 'read write',
      token_type: 'bearer',
    });
  });

  it('takes tokens nested in the answer from the scheme token_response_path', async () => {
    const expiresIn = 43_200;
    shape = (response) => {
      response.body = {
        ok: true,
        access_token: 'xoxb-bot-token',
        token_type: 'bot',
        authed_user: {
          id: 'U123',
          access_token: 'xoxp-user-token',
          token_type: 'user',
          scope: 'chat:write',
          refresh_token: 'xoxe-refresh',
          expires_in: expiresIn,
        },
      };
    };
    const { res } = await link({ token_response_path: 'authed_user' }, 'nested');
    expect(res.status, res.text).toBe(200);
    const { credentials } = await storedAccount(app, res.body.id);
    expect(credentials).toEqual({
      access_token: 'xoxp-user-token',
      refresh_token: 'xoxe-refresh',
      expires_at: expect.any(Number),
      scope: 'chat:write',
      token_type: 'bearer',
    });
    expect(Math.abs((credentials.expires_at as number) - (nowSeconds() + expiresIn))).toBeLessThanOrEqual(2);
  });

  it('refuses an answer without tokens at the path with 502, creating nothing', async () => {
    shape = (response) => {
      response.body = { ok: true, access_token: 'xoxb-bot-token', token_type: 'bot' };
    };
    const { row, res } = await link({ token_response_path: 'authed_user' }, 'nested-missing');
    expect(res.status).toBe(502);
    expect(res.body.error).toBe(
      `The OAuth 2.0 token endpoint at ${provider.issuer.url} gave no usable answer (an access token at authed_user was expected)`,
    );
    expect(await countAccounts(app, row.name)).toBe(0);
  });

  it('reports an error carried by a 200 answer as the provider error', async () => {
    shape = (response) => {
      response.body = { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' };
    };
    const { row, res } = await link({}, 'ok-but-error');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error:
        'The OAuth 2.0 token endpoint refused the authorization code: bad_verification_code ' +
        '(The code passed is incorrect or expired.)',
    });
    expect(await countAccounts(app, row.name)).toBe(0);
  });

  it('sends the browser back with status=error and the token error code', async () => {
    shape = (response) => {
      response.statusCode = 400;
      response.body = { error: 'invalid_grant' };
    };
    const { res } = await link({}, 'refused-redirect', 'https://app.example.com/after');
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location') as string);
    expect(location.searchParams.get('status')).toBe('error');
    expect(location.searchParams.get('error')).toBe('invalid_grant');
    expect(location.searchParams.has('linked_account_id')).toBe(false);
  });

  it('answers 502 when the token endpoint answers something that is not OAuth 2.0', async () => {
    shape = (response) => {
      response.statusCode = 503;
      response.body = 'maintenance' as unknown as Record<string, unknown>;
    };
    const { res } = await link({}, 'garbage');
    expect(res.status).toBe(502);
    expect(res.body.error).toContain('gave no usable answer');
  });
});
