import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/linked-accounts';

describe('GET /v1/linked-accounts (listLinkedAccounts)', () => {
  let app: TestApp;
  let projectA: TestProject;
  let projectB: TestProject;
  let appX: string;
  let appY: string;
  const linked: { id: string; app_name: string; linked_account_owner_id: string }[] = [];

  beforeAll(async () => {
    app = await TestApp.start();
    projectA = await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
    appX = (await app.ctx.newApp({ security_schemes: { api_key: {} } })).name;
    appY = (await app.ctx.newApp({ security_schemes: { api_key: {} } })).name;
    for (const name of [appX, appY]) {
      await app.post('/v1/app-configurations', { app_name: name, security_scheme: 'api_key' });
      await app.post(
        '/v1/app-configurations',
        { app_name: name, security_scheme: 'api_key' },
        { apiKey: projectB.apiKey },
      );
    }
    // Owners in non-alphabetical order, so creation order is what the list must follow.
    for (const [appName, owner] of [
      [appY, 'zed'],
      [appX, 'amy'],
      [appX, 'zed'],
      [appY, 'bob'],
    ]) {
      const res = await app.post(`${PATH}/api-key`, {
        app_name: appName,
        linked_account_owner_id: owner,
        api_key: `secret-${owner}-${appName}`,
      });
      expect(res.status).toBe(200);
      linked.push(res.body);
    }
    await app.post(
      `${PATH}/api-key`,
      { app_name: appX, linked_account_owner_id: 'amy', api_key: 'b-secret' },
      { apiKey: projectB.apiKey },
    );
  });

  afterAll(() => app.close());

  const ids = (body: { id: string }[]) => body.map((a) => a.id);

  it("lists the caller project's accounts in creation order, without credentials", async () => {
    const res = await app.get(PATH);
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(ids(linked));
    expect(res.body).toEqual(linked);
    expect(res.text).not.toContain('secret-');
    for (const account of res.body) {
      expect(Object.keys(account).sort()).toEqual(
        [
          'app_name',
          'created_at',
          'enabled',
          'id',
          'linked_account_owner_id',
          'project_id',
          'security_scheme',
          'updated_at',
        ].sort(),
      );
      expect(account.project_id).toBe(projectA.projectId);
    }
  });

  it('orders accounts created at the same instant by id', async () => {
    const project = await app.ctx.newProject('ties');
    const at = new Date('2030-01-01T00:00:00.000Z');
    const rows = [];
    for (const owner of ['t1', 't2', 't3', 't4']) {
      rows.push(
        await app.ctx.newLinkedAccount(project.projectId, appX, { linked_account_owner_id: owner, created_at: at }),
      );
    }
    const res = await app.get(PATH, { apiKey: project.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.every((a: { created_at: string }) => a.created_at === at.toISOString())).toBe(true);
    expect(ids(res.body)).toEqual(rows.map((r) => r.id).sort());
  });

  it('filters by app, by owner, and by both (at most one account)', async () => {
    const byApp = await app.get(PATH, { query: { app_name: appX } });
    expect(ids(byApp.body)).toEqual(ids(linked.filter((a) => a.app_name === appX)));

    const byOwner = await app.get(PATH, { query: { linked_account_owner_id: 'zed' } });
    expect(ids(byOwner.body)).toEqual(ids(linked.filter((a) => a.linked_account_owner_id === 'zed')));

    const both = await app.get(PATH, { query: { app_name: appY, linked_account_owner_id: 'bob' } });
    expect(both.body).toEqual([linked[3]]);

    const none = await app.get(PATH, { query: { app_name: 'NO_SUCH_APP' } });
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
  });

  it('project B sees only its own account', async () => {
    const res = await app.get(PATH, { apiKey: projectB.apiKey });
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({
      project_id: projectB.projectId,
      app_name: appX,
      linked_account_owner_id: 'amy',
    });
    expect(res.text).not.toContain('b-secret');
  });

  it('401 without an API key or with a wrong one', async () => {
    expect((await app.get(PATH, { apiKey: null })).status).toBe(401);
    expect((await app.get(PATH, { apiKey: 'pb_wrong' })).status).toBe(401);
  });

  it('422 for an owner id longer than 255 characters', async () => {
    const res = await app.get(PATH, { query: { linked_account_owner_id: 'x'.repeat(256) } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ loc: ['query', 'linked_account_owner_id'], msg: expect.any(String), type: 'string_too_long' }],
    });
  });
});
