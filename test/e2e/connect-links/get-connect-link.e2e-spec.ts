import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectLinkEntity } from '../../../src/connect-links/connect-link.entity.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { ConnectBrowser, CONNECT_LINKS, configuredApp, createLink } from './connect.js';

// getConnectLink
describe('GET /v1/linked-accounts/connect-links/{id}', () => {
  let app: TestApp;
  let project: TestProject;
  let other: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject();
    other = await app.ctx.newProject('Other');
  });

  afterAll(() => app.close());

  it('pending, then completed with the linked account once the user linked it; the link is single-use', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'u-1' });

    const pending = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual({
      id: link.id,
      app_name: catalogApp.name,
      linked_account_owner_id: 'u-1',
      status: 'pending',
      expires_at: link.expires_at,
    });

    const browser = new ConnectBrowser(app);
    const done = await browser.submit(await browser.open(link.url), {});
    expect(done.status).toBe(200);

    const completed = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    const accounts = await app.get('/v1/linked-accounts', {
      apiKey: project.apiKey,
      query: { app_name: catalogApp.name, linked_account_owner_id: 'u-1' },
    });
    expect(accounts.body).toHaveLength(1);
    expect(completed.body).toEqual({ ...pending.body, status: 'completed', linked_account_id: accounts.body[0].id });

    // Used up: the same URL now says so, in a fresh browser too.
    expect((await new ConnectBrowser(app).open(link.url)).status).toBe(410);
  });

  it('expired once expires_at has passed', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'u-2' });
    await app.dataSource
      .getRepository(ConnectLinkEntity)
      .update({ id: link.id }, { expires_at: new Date(Date.now() - 1000) });
    const res = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    expect(res.body.status).toBe('expired');
  });

  it('404 for another project and for an unknown id; 422 for a malformed id', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'u-3' });
    const foreign = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: other.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: `Connect link ${link.id} not found` });
    const unknown = await app.get(`${CONNECT_LINKS}/00000000-0000-4000-8000-000000000000`, { apiKey: project.apiKey });
    expect(unknown.status).toBe(404);
    const malformed = await app.get(`${CONNECT_LINKS}/not-a-uuid`, { apiKey: project.apiKey });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['path', 'connect_link_id']);
  });

  it('401 without an API key', async () => {
    const res = await app.get(`${CONNECT_LINKS}/00000000-0000-4000-8000-000000000000`, { apiKey: null });
    expect(res.status).toBe(401);
  });
});
