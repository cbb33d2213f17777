import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/app-configurations';

describe('GET /v1/app-configurations/{app_name} (getAppConfiguration)', () => {
  let app: TestApp;
  let projectA: TestProject;
  let projectB: TestProject;
  let appName: string;
  let created: any;

  beforeAll(async () => {
    app = await TestApp.start();
    projectA = await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
    const catalogApp = await app.ctx.newApp({ security_schemes: { api_key: {}, oauth2: {} } });
    const fn = await app.ctx.newFunction(catalogApp.name);
    appName = catalogApp.name;
    const res = await app.post(PATH, {
      app_name: appName,
      security_scheme: 'oauth2',
      security_scheme_overrides: { oauth2: { client_id: 'cid', client_secret: 'the-secret' } },
      all_functions_enabled: false,
      enabled_functions: [fn.name],
    });
    expect(res.status).toBe(200);
    created = res.body;
  });

  afterAll(() => app.close());

  it('returns the configuration as created, with the secret masked', async () => {
    const res = await app.get(`${PATH}/${appName}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
    expect(res.body.security_scheme_overrides).toEqual({ oauth2: { client_id: 'cid', client_secret: '****' } });
    expect(res.text).not.toContain('the-secret');
  });

  it('404 naming the app when the project has no configuration for it', async () => {
    const unconfigured = await app.ctx.newApp();
    const res = await app.get(`${PATH}/${unconfigured.name}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.stringContaining(unconfigured.name) });

    const unknown = await app.get(`${PATH}/NO_SUCH_APP`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toContain('NO_SUCH_APP');
  });

  it("404 for another project's configuration", async () => {
    const res = await app.get(`${PATH}/${appName}`, { apiKey: projectB.apiKey });
    expect(res.status).toBe(404);
    expect(res.text).not.toContain(projectA.projectId);
  });

  it('401 without an API key or with a wrong one', async () => {
    expect((await app.get(`${PATH}/${appName}`, { apiKey: null })).status).toBe(401);
    expect((await app.get(`${PATH}/${appName}`, { apiKey: 'pb_wrong' })).status).toBe(401);
  });
});
