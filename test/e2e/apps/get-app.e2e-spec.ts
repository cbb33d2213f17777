import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';

const unique = () => randomBytes(4).toString('hex').toUpperCase();

describe('GET /v1/apps/{app_name} (getApp)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const getApp = (name: string, apiKey?: string | null) => app.get(`/v1/apps/${encodeURIComponent(name)}`, { apiKey });

  it('returns the app with its visible functions ordered by name', async () => {
    const name = `MAILER_${unique()}`;
    const mailer = await app.ctx.newApp({ name, description: 'Sends and receives mail' });
    const send = await app.ctx.newFunction(name, { name: `${name}__SEND`, description: 'Send a mail' });
    const archive = await app.ctx.newFunction(name, { name: `${name}__ARCHIVE`, description: 'Archive a mail' });
    const list = await app.ctx.newFunction(name, { name: `${name}__LIST`, description: 'List mails' });
    await app.ctx.newFunction(name, { name: `${name}__PRIVATE`, visibility: 'private' });
    await app.ctx.newFunction(name, { name: `${name}__INACTIVE`, active: false });
    // Another app's function never shows up here.
    const other = await app.ctx.newApp();
    await app.ctx.newFunction(other.name);

    const res = await getApp(name);

    expect(res.status).toBe(200);
    // The contract's AppBasicWithFunctions, inside ACI's app details.
    expect(res.body).toMatchObject({
      name: mailer.name,
      description: 'Sends and receives mail',
      functions: [archive, list, send].map((f) => ({ name: f.name, description: f.description })),
    });
    expect(res.body.functions.map((f: { name: string }) => f.name)).toEqual([archive, list, send].map((f) => f.name));
  });

  it("carries ACI's app details: stable ids, schemes without secrets, functions with their whole schema", async () => {
    const name = `DETAILED_${unique()}`;
    const row = await app.ctx.newApp({
      name,
      display_name: 'Detailed App',
      provider: 'Detail Corp',
      version: '2.1.0',
      logo: '',
      categories: ['Mail', 'Productivity'],
      security_schemes: {
        api_key: { location: 'header', name: 'X-Key', prefix: 'Token' },
        oauth2: {
          location: 'header',
          name: 'Authorization',
          prefix: 'Bearer',
          client_id: 'client-id-value',
          scope: 'mail.read mail.send',
          authorize_url: 'https://auth.example.com/authorize',
          access_token_url: 'https://auth.example.com/token',
          refresh_token_url: 'https://auth.example.com/token',
        },
        no_auth: {},
      },
      secrets: 'sealed-secret-text',
    });
    const fn = await app.ctx.newFunction(name, { tags: ['mail', 'send'] });

    const res = await getApp(name);
    const again = await getApp(name);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name,
      display_name: 'Detailed App',
      provider: 'Detail Corp',
      version: '2.1.0',
      description: row.description,
      logo: null,
      categories: ['Mail', 'Productivity'],
      visibility: 'public',
      active: true,
      security_schemes: ['no_auth', 'api_key', 'oauth2'],
      supported_security_schemes: { no_auth: {}, api_key: {}, oauth2: { scope: 'mail.read mail.send' } },
      functions: [
        {
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          app_name: name,
          name: fn.name,
          description: fn.description,
          tags: ['mail', 'send'],
          visibility: 'public',
          active: true,
          protocol: 'rest',
          protocol_data: fn.protocol_data,
          parameters: fn.parameters,
          response: {},
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      ],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    // The same ids on every request (and every instance: they are derived from the names).
    expect(again.body.id).toBe(res.body.id);
    expect(again.body.functions[0].id).toBe(res.body.functions[0].id);
    expect(res.body.functions[0].id).not.toBe(res.body.id);
    for (const secret of ['client-id-value', 'sealed-secret-text', 'auth.example.com', 'X-Key']) {
      expect(res.text).not.toContain(secret);
    }
  });

  it('returns an empty function list for an app without visible functions', async () => {
    const empty = await app.ctx.newApp();
    await app.ctx.newFunction(empty.name, { visibility: 'private' });

    const res = await getApp(empty.name);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: empty.name, description: empty.description, functions: [] });
    expect(res.body.logo).toBe(empty.logo);
  });

  it.each([
    ['private', { visibility: 'private' as const }],
    ['inactive', { active: false }],
  ])('answers 404 for a %s app', async (_kind, overrides) => {
    const hidden = await app.ctx.newApp(overrides);
    await app.ctx.newFunction(hidden.name);

    const res = await getApp(hidden.name);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: `App ${hidden.name} not found` });
  });

  it('answers 404 for an unknown app, naming it', async () => {
    const res = await getApp('NO_SUCH_APP');

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'App NO_SUCH_APP not found' });
  });

  it('matches the name exactly (no case folding)', async () => {
    const known = await app.ctx.newApp();

    const res = await getApp(known.name.toLowerCase());

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: `App ${known.name.toLowerCase()} not found` });
  });

  it('answers 401 without a key and with a wrong key', async () => {
    const known = await app.ctx.newApp();

    const missing = await getApp(known.name, null);
    const wrong = await getApp(known.name, 'wrong-key');

    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
  });
});
