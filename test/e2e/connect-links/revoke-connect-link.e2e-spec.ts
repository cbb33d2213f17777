import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { ConnectLinkEntity } from '../../../src/connect-links/connect-link.entity.js';
import { ConnectBrowser, CONNECT_LINKS, configuredApp, createLink } from './connect.js';

// revokeConnectLink
describe('DELETE /v1/linked-accounts/connect-links/{id}', () => {
  let app: TestApp;
  let project: TestProject;
  let other: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject();
    other = await app.ctx.newProject('Other');
  });

  afterAll(() => app.close());

  it('revokes a pending link: status revoked, the page answers 410 and links nothing', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'api_key');
    const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'u-1' });
    // A browser that already opened the page before the revocation.
    const browser = new ConnectBrowser(app);
    const page = await browser.open(link.url);
    expect(page.status).toBe(200);

    const res = await app.delete(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    expect(res.status).toBe(204);
    expect((await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey })).body.status).toBe('revoked');

    const posted = await browser.submit(page, { api_key: 'sk-after-revoke' });
    expect(posted.status).toBe(410);
    expect(posted.text).toContain('Link revoked');
    expect((await new ConnectBrowser(app).open(link.url)).status).toBe(410);
    const accounts = await app.get('/v1/linked-accounts', {
      apiKey: project.apiKey,
      query: { app_name: catalogApp.name },
    });
    expect(accounts.body).toEqual([]);
  });

  it('409 when the link is no longer pending', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'u-2' });
    const browser = new ConnectBrowser(app);
    expect((await browser.submit(await browser.open(link.url), {})).status).toBe(200);
    const res = await app.delete(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: `Connect link ${link.id} is completed; only a pending link can be revoked` });
  });

  it('409 for an expired link, which stays expired (not revoked)', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'u-4' });
    await app.dataSource
      .getRepository(ConnectLinkEntity)
      .update({ id: link.id }, { expires_at: new Date(Date.now() - 1000) });
    const res = await app.delete(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: `Connect link ${link.id} is expired; only a pending link can be revoked` });
    expect((await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey })).body.status).toBe('expired');
  });

  it('404 for another project’s link (left untouched) and for an unknown id', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'u-3' });
    expect((await app.delete(`${CONNECT_LINKS}/${link.id}`, { apiKey: other.apiKey })).status).toBe(404);
    expect((await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey })).body.status).toBe('pending');
    expect(
      (await app.delete(`${CONNECT_LINKS}/00000000-0000-4000-8000-000000000000`, { apiKey: project.apiKey })).status,
    ).toBe(404);
  });
});
