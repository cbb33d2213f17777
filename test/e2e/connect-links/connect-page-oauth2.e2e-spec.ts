import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectLinkEntity } from '../../../src/connect-links/connect-link.entity.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { CALLBACK_PATH, newOAuth2App } from '../oauth2/linking.js';
import { OidcServer } from '../oauth2/oidc-server.js';
import { ConnectBrowser, CONNECT_LINKS, createLink } from './connect.js';

const CLIENT = { client_id: 'connect-client', client_secret: 'connect-secret' };

/** The oauth2 page of a connect link through the existing authorization-code flow, against a strict local provider. */
describe('connect page, oauth2 scheme', () => {
  let app: TestApp;
  let oidc: OidcServer;
  let project: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject();
    oidc = await OidcServer.start([{ ...CLIENT, redirect_uris: [`${app.url}${CALLBACK_PATH}`] }]);
  });

  afterAll(async () => {
    await oidc.close();
    await app.close();
  });

  async function oauth2Link(owner: string) {
    const calendar = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme(),
      override: { ...CLIENT, redirect_url: `${app.url}${CALLBACK_PATH}` },
    });
    const link = await createLink(app, project.apiKey, { app_name: calendar.name, linked_account_owner_id: owner });
    return { calendar, link };
  }

  /** Button → provider (sign-in, consent) → callback → back to the connect page. */
  async function clickThrough(browser: ConnectBrowser, page: Awaited<ReturnType<ConnectBrowser['open']>>) {
    const started = await browser.submit(page, {});
    expect(started.status).toBe(303);
    const authorize = new URL(started.headers.get('location') as string);
    expect(authorize.origin).toBe(oidc.issuer);
    const callbackUrl = await oidc.authorize(authorize.href);
    const callback = await fetch(`${app.url}${callbackUrl.pathname}${callbackUrl.search}`, { redirect: 'manual' });
    expect(callback.status).toBe(302);
    const back = new URL(callback.headers.get('location') as string);
    return browser.request('GET', `${back.pathname}${back.search}`);
  }

  it('shows a button whose form may go to the provider, links the account through PKCE, then confirms', async () => {
    const { calendar, link } = await oauth2Link('oauth-user');
    const browser = new ConnectBrowser(app);
    const page = await browser.open(link.url);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`action="/connect/${link.id}/oauth2"`);
    expect(page.text).toContain(`Continue to ${calendar.display_name}`);
    expect(page.text).not.toContain('type="password"');
    expect(page.headers.get('content-security-policy')).toContain(`form-action 'self' ${oidc.issuer};`);

    const done = await clickThrough(browser, page);
    expect(done.status).toBe(200);
    expect(done.text).toContain('Account linked');

    const accounts = await app.get('/v1/linked-accounts', {
      apiKey: project.apiKey,
      query: { app_name: calendar.name, linked_account_owner_id: 'oauth-user' },
    });
    expect(accounts.body).toEqual([expect.objectContaining({ security_scheme: 'oauth2', enabled: true })]);
    const status = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    expect(status.body).toMatchObject({ status: 'completed', linked_account_id: accounts.body[0].id });
    expect(oidc.tokenRequests.at(-1)?.form.code_verifier).toBeTruthy();
  });

  it('re-linking through OAuth 2.0 keeps the account id and clears "needs re-linking"', async () => {
    const { calendar, link } = await oauth2Link('relink-user');
    const existing = await app.ctx.newLinkedAccount(
      project.projectId,
      calendar.name,
      { linked_account_owner_id: 'relink-user', security_scheme: 'oauth2', needs_relink: true },
      { access_token: 'old', token_type: 'Bearer' },
    );
    const browser = new ConnectBrowser(app);
    expect((await clickThrough(browser, await browser.open(link.url))).status).toBe(200);
    const status = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
    expect(status.body.linked_account_id).toBe(existing.id);
    const row = await app.dataSource.getRepository(LinkedAccountEntity).findOneByOrFail({ id: existing.id });
    expect(row.needs_relink).toBe(false);
    expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ app_name: calendar.name })).toBe(1);
  });

  it('does not trust a forged return: an account not linked by this flow completes nothing', async () => {
    const { calendar, link } = await oauth2Link('forger');
    const older = await app.ctx.newLinkedAccount(project.projectId, calendar.name, {
      linked_account_owner_id: 'forger',
      security_scheme: 'oauth2',
    });
    const browser = new ConnectBrowser(app);
    await browser.open(link.url);
    const forged = await browser.request(
      'GET',
      `/connect/${link.id}/oauth2-return?status=success&linked_account_id=${older.id}`,
    );
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('The account was not linked');
    const row = await app.dataSource.getRepository(ConnectLinkEntity).findOneByOrFail({ id: link.id });
    expect(row.status).toBe('pending');
  });

  it('the button refuses a cross-site post', async () => {
    const { link } = await oauth2Link('csrf-user');
    const browser = new ConnectBrowser(app);
    const page = await browser.open(link.url);
    const res = await browser.submit(page, {}, { origin: 'https://evil.example.test' });
    expect(res.status).toBe(403);
    expect(res.headers.get('location')).toBeNull();
  });
});
