import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { LinkedAccountsRepository } from '../../../src/linked-accounts/linked-accounts.repository.js';
import { withWriteBetween } from '../../helpers/between-read-and-write.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/linked-accounts';

describe('PATCH /v1/linked-accounts/{linked_account_id} (updateLinkedAccount)', () => {
  let app: TestApp;
  let projectA: TestProject;
  let projectB: TestProject;
  let appName: string;
  let owners = 0;

  beforeAll(async () => {
    app = await TestApp.start();
    projectA = await app.ctx.newProject('A');
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

  describe('a token refresh committed between the read and the write of a PATCH survives it', () => {
    const expired = { access_token: 'at-old', refresh_token: 'rt-old', expires_at: 1 };

    async function oauth2Account() {
      const oauthApp = await app.ctx.newApp({ security_schemes: { oauth2: {} } });
      await app.ctx.newAppConfiguration(projectA.projectId, oauthApp.name, { security_scheme: 'oauth2' });
      return app.ctx.newLinkedAccount(projectA.projectId, oauthApp.name, { security_scheme: 'oauth2' }, expired);
    }

    /** PATCH {enabled: false} with a refresh committed through the refresh's own write path meanwhile. */
    const patchDuringRefresh = (id: string, credentials?: object, needsRelink?: boolean) =>
      withWriteBetween(
        app.app.get(LinkedAccountsRepository),
        async () => {
          await app.app.get(LinkedAccountsRepository).withLockedAccount(id, () =>
            Promise.resolve({
              value: null,
              credentials: credentials && app.app.get(SecretBox).sealJson(credentials),
              needsRelink,
            }),
          );
        },
        () => patch(id, { enabled: false }),
      );

    const stored = (id: string) => app.dataSource.getRepository(LinkedAccountEntity).findOneByOrFail({ id });

    it('rotated tokens are not replaced by the ones the PATCH read', async () => {
      const account = await oauth2Account();
      const rotated = { access_token: 'at-new', refresh_token: 'rt-new', expires_at: 4_000_000_000 };
      const res = await patchDuringRefresh(account.id, rotated);
      expect(res.status).toBe(200);
      expect(res.body.enabled).toBe(false);
      const row = await stored(account.id);
      expect(row.enabled).toBe(false);
      expect(app.app.get(SecretBox).openJson(row.credentials)).toEqual(rotated);
    });

    it('needs_relink set by a refused refresh stays set', async () => {
      const account = await oauth2Account();
      const res = await patchDuringRefresh(account.id, undefined, true);
      expect(res.status).toBe(200);
      const row = await stored(account.id);
      expect(row).toMatchObject({ enabled: false, needs_relink: true });
      expect(app.app.get(SecretBox).openJson(row.credentials)).toEqual(expired);
    });
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
