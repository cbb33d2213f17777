import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/linked-accounts';

describe('PATCH /v1/linked-accounts/{linked_account_id} (updateLinkedAccount)', () => {
  let app: TestApp;
  let projectB: TestProject;
  let appName: string;
  let owners = 0;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
    appName = (await app.ctx.newApp({ security_schemes: { http_basic: {} } })).name;
    await app.post('/v1/app-configurations', { app_name: appName, security_scheme: 'http_basic' });
  });

  afterAll(() => app.close());

  async function linked() {
    const res = await app.post(`${PATH}/http-basic`, {
      app_name: appName,
      linked_account_owner_id: `owner-${++owners}`,
      username: 'user',
      password: 'patch-secret-pw',
    });
    expect(res.status).toBe(200);
    return res.body;
  }

  const patch = (id: string, body: unknown, apiKey?: string | null) => app.patch(`${PATH}/${id}`, body, { apiKey });

  it('disables and re-enables the account, moving updated_at', async () => {
    const account = await linked();
    const res = await patch(account.id, { enabled: false });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...account, enabled: false, updated_at: expect.any(String) });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(account.updated_at));
    expect(res.text).not.toContain('patch-secret-pw');
    expect((await app.get(`${PATH}/${account.id}`)).body.enabled).toBe(false);

    const back = await patch(account.id, { enabled: true });
    expect(back.body.enabled).toBe(true);
  });

  it('leaves the account unchanged when enabled is absent or null', async () => {
    const account = await linked();
    await patch(account.id, { enabled: false });
    const before = (await app.get(`${PATH}/${account.id}`)).body;
    expect((await patch(account.id, {})).body).toEqual(before);
    expect((await patch(account.id, { enabled: null })).body).toEqual(before);
  });

  it('404 for an unknown id', async () => {
    const id = randomUUID();
    const res = await patch(id, { enabled: false });
    expect(res.status).toBe(404);
    expect(res.body.error).toContain(id);
  });

  it("404 for another project's account, which stays unchanged", async () => {
    const account = await linked();
    const res = await patch(account.id, { enabled: false }, projectB.apiKey);
    expect(res.status).toBe(404);
    expect((await app.get(`${PATH}/${account.id}`)).body).toEqual(account);
  });

  it('401 without an API key or with a wrong one', async () => {
    const account = await linked();
    expect((await patch(account.id, { enabled: false }, null)).status).toBe(401);
    expect((await patch(account.id, { enabled: false }, 'pb_wrong')).status).toBe(401);
    expect((await app.get(`${PATH}/${account.id}`)).body.enabled).toBe(true);
  });

  describe('422 input validation', () => {
    const detail = (loc: (string | number)[], type: string) => ({ loc, msg: expect.any(String), type });

    it('enabled not a boolean', async () => {
      const account = await linked();
      const res = await patch(account.id, { enabled: 'perhaps' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body', 'enabled'], 'bool_parsing')] });
    });

    it('an id that is not a UUID', async () => {
      const res = await patch('nope', { enabled: false });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['path', 'linked_account_id'], 'uuid_parsing')] });
    });

    it('missing body', async () => {
      const res = await app.request('PATCH', `${PATH}/${randomUUID()}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'missing')] });
    });

    it('malformed JSON text', async () => {
      const res = await app.request('PATCH', `${PATH}/${randomUUID()}`, { rawBody: '{"enabled": fals' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'json_invalid')] });
    });

    it('a body that is not an object', async () => {
      const res = await patch(randomUUID(), [true]);
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toEqual(detail(['body'], 'dict_type'));
    });
  });
});
