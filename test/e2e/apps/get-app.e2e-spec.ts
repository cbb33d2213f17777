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
    expect(res.body).toEqual({
      name: mailer.name,
      description: 'Sends and receives mail',
      functions: [archive, list, send].map((f) => ({ name: f.name, description: f.description })),
    });
  });

  it('returns an empty function list for an app without visible functions', async () => {
    const empty = await app.ctx.newApp();
    await app.ctx.newFunction(empty.name, { visibility: 'private' });

    const res = await getApp(empty.name);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: empty.name, description: empty.description, functions: [] });
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
