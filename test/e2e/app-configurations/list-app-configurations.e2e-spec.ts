import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/app-configurations';

describe('GET /v1/app-configurations (listAppConfigurations)', () => {
  let app: TestApp;
  let projectA: TestProject;
  let projectB: TestProject;
  const names = ['LIST_B', 'LIST_A_2', 'LIST_A', 'LIST_C'];

  beforeAll(async () => {
    app = await TestApp.start();
    projectA = await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
    for (const name of names) {
      await app.ctx.newApp({ name });
    }
    // Created through the API in a scrambled order; B configures one app of its own.
    for (const name of names) {
      const res = await app.post(PATH, { app_name: name, security_scheme: 'api_key' });
      expect(res.status).toBe(200);
    }
    await app.ctx.newApp({ name: 'LIST_ONLY_B' });
    await app.post(PATH, { app_name: 'LIST_ONLY_B', security_scheme: 'api_key' }, { apiKey: projectB.apiKey });
    await app.post(PATH, { app_name: 'LIST_A', security_scheme: 'api_key' }, { apiKey: projectB.apiKey });
  });

  afterAll(() => app.close());

  const sorted = [...names].sort();

  it("lists only the caller project's configurations, ordered by app name", async () => {
    const res = await app.get(PATH);
    expect(res.status).toBe(200);
    expect(res.body.map((c: { app_name: string }) => c.app_name)).toEqual(sorted);
    for (const configuration of res.body) {
      expect(configuration.project_id).toBe(projectA.projectId);
      expect(Object.keys(configuration).sort()).toEqual(
        [
          'all_functions_enabled',
          'app_name',
          'created_at',
          'enabled',
          'enabled_functions',
          'extra_credentials',
          'id',
          'owner_execution_limit',
          'project_id',
          'security_scheme',
          'security_scheme_overrides',
          'server_variables',
          'updated_at',
        ].sort(),
      );
    }

    const other = await app.get(PATH, { apiKey: projectB.apiKey });
    expect(other.body.map((c: { app_name: string }) => c.app_name)).toEqual(['LIST_A', 'LIST_ONLY_B']);
    expect(other.body.every((c: { project_id: string }) => c.project_id === projectB.projectId)).toBe(true);
  });

  it('filters by app_names given once or as repeated keys', async () => {
    const one = await app.get(PATH, { query: { app_names: 'LIST_C' } });
    expect(one.status).toBe(200);
    expect(one.body.map((c: { app_name: string }) => c.app_name)).toEqual(['LIST_C']);

    const several = await app.get(PATH, { query: { app_names: ['LIST_C', 'LIST_A', 'LIST_ONLY_B', 'NOPE'] } });
    expect(several.body.map((c: { app_name: string }) => c.app_name)).toEqual(['LIST_A', 'LIST_C']);

    const none = await app.get(PATH, { query: { app_names: 'NOPE' } });
    expect(none.body).toEqual([]);
  });

  it('pages with limit and offset', async () => {
    const page = await app.get(PATH, { query: { limit: 2, offset: 1 } });
    expect(page.status).toBe(200);
    expect(page.body.map((c: { app_name: string }) => c.app_name)).toEqual(sorted.slice(1, 3));

    const tail = await app.get(PATH, { query: { limit: 1000, offset: 3 } });
    expect(tail.body.map((c: { app_name: string }) => c.app_name)).toEqual(sorted.slice(3));

    const past = await app.get(PATH, { query: { offset: 50 } });
    expect(past.body).toEqual([]);
  });

  it('returns at most 100 configurations by default', async () => {
    const big = await app.ctx.newProject('big');
    for (let i = 0; i < 101; i++) {
      const catalogApp = await app.ctx.newApp({ name: `MANY_${String(i).padStart(3, '0')}` });
      await app.ctx.newAppConfiguration(big.projectId, catalogApp.name);
    }
    const res = await app.get(PATH, { apiKey: big.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(100);
    expect(res.body[99].app_name).toBe('MANY_099');
    const all = await app.get(PATH, { apiKey: big.apiKey, query: { limit: 1000 } });
    expect(all.body).toHaveLength(101);
  });

  it('401 without an API key or with a wrong one', async () => {
    expect((await app.get(PATH, { apiKey: null })).status).toBe(401);
    const wrong = await app.get(PATH, { apiKey: 'pb_wrong' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: expect.any(String) });
  });

  describe('422 for bad query values', () => {
    it.each([
      [{ limit: 0 }, 'limit', 'greater_than_equal'],
      [{ limit: 1001 }, 'limit', 'less_than_equal'],
      [{ limit: 'ten' }, 'limit', 'int_parsing'],
      [{ limit: '1.5' }, 'limit', 'int_parsing'],
      [{ offset: -1 }, 'offset', 'greater_than_equal'],
      [{ offset: 'x' }, 'offset', 'int_parsing'],
    ])('%o', async (query, field, type) => {
      const res = await app.get(PATH, { query });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ loc: ['query', field], msg: expect.any(String), type }] });
    });

    it('accepts the bounds 1 and 1000', async () => {
      expect((await app.get(PATH, { query: { limit: 1 } })).body).toHaveLength(1);
      expect((await app.get(PATH, { query: { limit: 1000, offset: 0 } })).status).toBe(200);
    });
  });
});
