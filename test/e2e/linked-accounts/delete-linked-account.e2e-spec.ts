import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/linked-accounts';

describe('DELETE /v1/linked-accounts/{linked_account_id} (deleteLinkedAccount)', () => {
  let app: TestApp;
  let projectB: TestProject;
  let appName: string;
  let owners = 0;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
    appName = (await app.ctx.newApp({ security_schemes: { no_auth: {} } })).name;
    await app.post('/v1/app-configurations', { app_name: appName, security_scheme: 'no_auth' });
  });

  afterAll(() => app.close());

  async function linked() {
    const res = await app.post(`${PATH}/no-auth`, { app_name: appName, linked_account_owner_id: `o-${++owners}` });
    expect(res.status).toBe(200);
    return res.body;
  }

  const exists = (id: string) => app.dataSource.getRepository(LinkedAccountEntity).existsBy({ id });

  it('204 with no body; the account is gone and the others stay', async () => {
    const doomed = await linked();
    const kept = await linked();
    const res = await app.delete(`${PATH}/${doomed.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await exists(doomed.id)).toBe(false);
    expect((await app.get(`${PATH}/${doomed.id}`)).status).toBe(404);
    expect(await exists(kept.id)).toBe(true);
    // The configuration is untouched and the owner can be linked again.
    expect((await app.get(`/v1/app-configurations/${appName}`)).status).toBe(200);
    expect(
      (
        await app.post(`${PATH}/no-auth`, {
          app_name: appName,
          linked_account_owner_id: doomed.linked_account_owner_id,
        })
      ).status,
    ).toBe(200);
  });

  it('404 when deleting twice or an unknown id', async () => {
    const account = await linked();
    expect((await app.delete(`${PATH}/${account.id}`)).status).toBe(204);
    const again = await app.delete(`${PATH}/${account.id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: `Linked account ${account.id} not found` });
  });

  it("404 for another project's account, which stays", async () => {
    const account = await linked();
    const res = await app.delete(`${PATH}/${account.id}`, { apiKey: projectB.apiKey });
    expect(res.status).toBe(404);
    expect(await exists(account.id)).toBe(true);
  });

  it('401 without an API key or with a wrong one', async () => {
    const account = await linked();
    expect((await app.delete(`${PATH}/${account.id}`, { apiKey: null })).status).toBe(401);
    expect((await app.delete(`${PATH}/${account.id}`, { apiKey: 'pb_wrong' })).status).toBe(401);
    expect(await exists(account.id)).toBe(true);
  });

  it('422 uuid_parsing for an id that is not a UUID', async () => {
    const res = await app.delete(`${PATH}/${randomUUID()}x`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ loc: ['path', 'linked_account_id'], msg: expect.any(String), type: 'uuid_parsing' }],
    });
  });
});
