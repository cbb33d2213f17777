import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';

const unique = () => randomBytes(4).toString('hex').toUpperCase();

describe('GET /v1/functions (listFunctions)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const list = (query: Record<string, any> = {}, apiKey?: string | null) => app.get('/v1/functions', { query, apiKey });

  it('lists visible functions with their details, filtered by app and function names, by name', async () => {
    const one = await app.ctx.newApp({ name: `LF_ONE_${unique()}` });
    const two = await app.ctx.newApp({ name: `LF_TWO_${unique()}` });
    const hiddenApp = await app.ctx.newApp({ name: `LF_HIDDEN_${unique()}`, active: false });
    const y = await app.ctx.newFunction(one.name, { name: `${one.name}__Y` });
    const x = await app.ctx.newFunction(one.name, { name: `${one.name}__X` });
    await app.ctx.newFunction(one.name, { name: `${one.name}__PRIVATE`, visibility: 'private' });
    const z = await app.ctx.newFunction(two.name, { name: `${two.name}__Z` });
    await app.ctx.newFunction(hiddenApp.name);

    const byApps = await list({ app_names: [one.name, two.name, hiddenApp.name] });
    const byNames = await list({ function_names: [z.name, x.name, `${one.name}__PRIVATE`] });
    const both = await list({ app_names: one.name, function_names: [z.name, y.name] });

    expect(byApps.status).toBe(200);
    expect(byApps.body.map((f: { name: string }) => f.name)).toEqual([x.name, y.name, z.name]);
    expect(byNames.body.map((f: { name: string }) => f.name)).toEqual([x.name, z.name]);
    expect(both.body.map((f: { name: string }) => f.name)).toEqual([y.name]);
    expect(byApps.body[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      app_name: one.name,
      name: x.name,
      description: x.description,
      tags: x.tags,
      visibility: 'public',
      active: true,
      protocol: 'rest',
      protocol_data: x.protocol_data,
      parameters: x.parameters,
      response: x.response,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // The same details GET /v1/apps/{app_name} gives for it.
    const details = await app.get(`/v1/apps/${one.name}`);
    expect(details.body.functions[0]).toEqual(byApps.body[0]);
  });

  it('pages with limit and offset', async () => {
    const a = await app.ctx.newApp({ name: `LF_PAGE_${unique()}` });
    for (const suffix of ['A', 'B', 'C']) {
      await app.ctx.newFunction(a.name, { name: `${a.name}__${suffix}` });
    }

    const page = await list({ app_names: a.name, limit: 2, offset: 1 });

    expect(page.body.map((f: { name: string }) => f.name)).toEqual([`${a.name}__B`, `${a.name}__C`]);
  });

  it('answers 422 naming each bad parameter, and 401 without a key', async () => {
    const bad = await list({ limit: 1001, offset: 'x' });
    const anonymous = await list({}, null);

    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: string[]; type: string }) => [d.loc, d.type])).toEqual([
      [['query', 'limit'], 'less_than_equal'],
      [['query', 'offset'], 'int_parsing'],
    ]);
    expect(anonymous.status).toBe(401);
  });
});
