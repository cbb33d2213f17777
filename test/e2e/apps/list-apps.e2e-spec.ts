import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';

const unique = () => randomBytes(4).toString('hex').toUpperCase();

describe('GET /v1/apps (listApps)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const list = (query: Record<string, any> = {}, apiKey?: string | null) => app.get('/v1/apps', { query, apiKey });

  it('lists the named visible apps by name, each with its details and visible functions', async () => {
    const tag = unique();
    const b = await app.ctx.newApp({ name: `LIST_B_${tag}` });
    const a = await app.ctx.newApp({ name: `LIST_A_${tag}` });
    const hidden = await app.ctx.newApp({ name: `LIST_C_${tag}`, visibility: 'private' });
    const fn = await app.ctx.newFunction(a.name);
    await app.ctx.newFunction(a.name, { active: false });

    const res = await list({ app_names: [b.name, hidden.name, a.name] });

    expect(res.status).toBe(200);
    expect(res.body.map((x: { name: string }) => x.name)).toEqual([a.name, b.name]);
    const [first, second] = res.body;
    // The same details as GET /v1/apps/{app_name}.
    expect(first).toEqual((await app.get(`/v1/apps/${a.name}`)).body);
    expect(first.functions.map((f: { name: string }) => f.name)).toEqual([fn.name]);
    expect(second.functions).toEqual([]);
  });

  it('pages the whole catalogue by name with limit and offset', async () => {
    const tag = unique();
    for (const letter of ['P', 'Q', 'R']) {
      await app.ctx.newApp({ name: `PAGE_${letter}_${tag}` });
    }

    const all = await list({ limit: 1000 });
    const names: string[] = all.body.map((x: { name: string }) => x.name);
    const pageOne = await list({ limit: 2, offset: 0 });
    const pageTwo = await list({ limit: 2, offset: 2 });

    expect(names).toEqual([...names].sort());
    expect([...pageOne.body, ...pageTwo.body].map((x: { name: string }) => x.name)).toEqual(names.slice(0, 4));
  });

  it('answers 422 naming each bad parameter, and 401 without a key', async () => {
    const bad = await list({ limit: 0, offset: -1 });
    const anonymous = await list({}, null);

    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: string[]; type: string }) => [d.loc, d.type])).toEqual([
      [['query', 'limit'], 'greater_than_equal'],
      [['query', 'offset'], 'greater_than_equal'],
    ]);
    expect(anonymous.status).toBe(401);
  });
});
