import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppConfigurationEntity } from '../../../src/app-configurations/app-configuration.entity.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/app-configurations';

describe('DELETE /v1/app-configurations/{app_name} (deleteAppConfiguration)', () => {
  let app: TestApp;
  let projectA: TestProject;
  let projectB: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    projectA = await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
  });

  afterAll(() => app.close());

  const accounts = (projectId: string, appName: string) =>
    app.dataSource.getRepository(LinkedAccountEntity).countBy({ project_id: projectId, app_name: appName });
  const configurations = (projectId: string, appName: string) =>
    app.dataSource.getRepository(AppConfigurationEntity).countBy({ project_id: projectId, app_name: appName });

  async function configuredApp() {
    const catalogApp = await app.ctx.newApp({ security_schemes: { api_key: {} } });
    const res = await app.post(PATH, { app_name: catalogApp.name, security_scheme: 'api_key' });
    expect(res.status).toBe(200);
    return catalogApp.name;
  }

  it("removes the configuration and the project's linked accounts of that app, and nothing else", async () => {
    const target = await configuredApp();
    const otherApp = await configuredApp();
    for (const owner of ['u1', 'u2', 'u3']) {
      const link = await app.post('/v1/linked-accounts/api-key', {
        app_name: target,
        linked_account_owner_id: owner,
        api_key: `key-${owner}`,
      });
      expect(link.status).toBe(200);
    }
    await app.post('/v1/linked-accounts/api-key', { app_name: otherApp, linked_account_owner_id: 'u1', api_key: 'k' });
    // Project B configured the same app and linked an account: untouched by A's delete.
    await app.post(PATH, { app_name: target, security_scheme: 'api_key' }, { apiKey: projectB.apiKey });
    await app.post(
      '/v1/linked-accounts/api-key',
      { app_name: target, linked_account_owner_id: 'u1', api_key: 'k' },
      { apiKey: projectB.apiKey },
    );

    const res = await app.delete(`${PATH}/${target}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ app_name: target, deleted_linked_accounts: 3 });
    expect((await app.get(`${PATH}/${target}`)).status).toBe(404);
    expect(await configurations(projectA.projectId, target)).toBe(0);
    expect(await accounts(projectA.projectId, target)).toBe(0);
    expect((await app.get('/v1/linked-accounts', { query: { app_name: target } })).body).toEqual([]);

    expect(await accounts(projectA.projectId, otherApp)).toBe(1);
    expect((await app.get(`${PATH}/${otherApp}`)).status).toBe(200);
    expect(await configurations(projectB.projectId, target)).toBe(1);
    expect(await accounts(projectB.projectId, target)).toBe(1);
    expect((await app.get(`${PATH}/${target}`, { apiKey: projectB.apiKey })).status).toBe(200);
  });

  it('reports 0 when the app had no linked accounts, and the app can be configured again', async () => {
    const name = await configuredApp();
    const res = await app.delete(`${PATH}/${name}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ app_name: name, deleted_linked_accounts: 0 });
    expect((await app.post(PATH, { app_name: name, security_scheme: 'api_key' })).status).toBe(200);
  });

  it('404 when deleting twice or an app that was never configured', async () => {
    const name = await configuredApp();
    expect((await app.delete(`${PATH}/${name}`)).status).toBe(200);
    const again = await app.delete(`${PATH}/${name}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: expect.stringContaining(name) });
    expect((await app.delete(`${PATH}/NO_SUCH_APP`)).status).toBe(404);
  });

  it("404 for another project's configuration, which keeps its linked accounts", async () => {
    const name = await configuredApp();
    await app.post('/v1/linked-accounts/api-key', { app_name: name, linked_account_owner_id: 'u', api_key: 'k' });
    const res = await app.delete(`${PATH}/${name}`, { apiKey: projectB.apiKey });
    expect(res.status).toBe(404);
    expect(await configurations(projectA.projectId, name)).toBe(1);
    expect(await accounts(projectA.projectId, name)).toBe(1);
  });

  it('401 without an API key or with a wrong one', async () => {
    const name = await configuredApp();
    expect((await app.delete(`${PATH}/${name}`, { apiKey: null })).status).toBe(401);
    expect((await app.delete(`${PATH}/${name}`, { apiKey: 'pb_wrong' })).status).toBe(401);
    expect(await configurations(projectA.projectId, name)).toBe(1);
  });
});
