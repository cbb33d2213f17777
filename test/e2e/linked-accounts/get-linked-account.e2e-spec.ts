import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/linked-accounts';

describe('GET /v1/linked-accounts/{linked_account_id} (getLinkedAccount)', () => {
  let app: TestApp;
  let projectB: TestProject;
  let account: any;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
    const catalogApp = await app.ctx.newApp({ security_schemes: { http_bearer: {} } });
    await app.post('/v1/app-configurations', { app_name: catalogApp.name, security_scheme: 'http_bearer' });
    const res = await app.post(`${PATH}/http-bearer`, {
      app_name: catalogApp.name,
      linked_account_owner_id: 'owner',
      token: 'tok-get-secret',
    });
    expect(res.status).toBe(200);
    account = res.body;
  });

  afterAll(() => app.close());

  it('returns the account as linked, without credentials', async () => {
    const res = await app.get(`${PATH}/${account.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(account);
    expect(res.text).not.toContain('tok-get-secret');
  });

  it('404 naming an unknown id', async () => {
    const id = randomUUID();
    const res = await app.get(`${PATH}/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: `Linked account ${id} not found` });
  });

  it("404 for another project's account", async () => {
    const res = await app.get(`${PATH}/${account.id}`, { apiKey: projectB.apiKey });
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(account.app_name);
  });

  it('401 without an API key or with a wrong one', async () => {
    expect((await app.get(`${PATH}/${account.id}`, { apiKey: null })).status).toBe(401);
    expect((await app.get(`${PATH}/${account.id}`, { apiKey: 'pb_wrong' })).status).toBe(401);
  });

  it.each(['not-a-uuid', '12345', `${'0'.repeat(8)}-0000-0000-0000-00000000000g`])(
    '422 uuid_parsing for %s',
    async (id) => {
      const res = await app.get(`${PATH}/${id}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [{ loc: ['path', 'linked_account_id'], msg: expect.any(String), type: 'uuid_parsing' }],
      });
    },
  );
});
