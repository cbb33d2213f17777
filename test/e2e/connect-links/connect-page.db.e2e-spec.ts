import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { ConnectLinkEntity } from '../../../src/connect-links/connect-link.entity.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { ConnectBrowser, CONNECT_LINKS, configuredApp, createLink, type PageResult } from './connect.js';

const ALLOWED = 'https://app.example.test';

/** The end user's page of a connect link, through real HTTP like a browser without JavaScript. */
describe('connect page (/connect/{id})', () => {
  let app: TestApp;
  let project: TestProject;

  beforeAll(async () => {
    app = await TestApp.start({ OAUTH2_REDIRECT_ALLOWED_ORIGINS: ALLOWED });
    project = await app.ctx.newProject('Acme Assistant');
  });

  afterAll(() => app.close());

  const accounts = (appName: string) => app.dataSource.getRepository(LinkedAccountEntity).findBy({ app_name: appName });
  const credentialsOf = (row: LinkedAccountEntity) => app.app.get(SecretBox).openJson(row.credentials);
  const linkStatus = async (id: string) =>
    (await app.get(`${CONNECT_LINKS}/${id}`, { apiKey: project.apiKey })).body.status as string;

  async function newLink(scheme: 'api_key' | 'http_basic' | 'http_bearer' | 'no_auth', extra = {}) {
    const catalogApp = await configuredApp(app, project.apiKey, scheme, {
      display_name: 'Acme CRM',
      description: 'Customers & deals <b>in one place</b>',
    });
    const link = await createLink(app, project.apiKey, {
      app_name: catalogApp.name,
      linked_account_owner_id: 'alice@example.test',
      ...extra,
    });
    return { appName: catalogApp.name, link };
  }

  function expectPrivatePage(page: PageResult) {
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
  }

  describe('opening the link', () => {
    it('exchanges the token for an HttpOnly SameSite=Lax path-scoped cookie and 303s to a token-free URL', async () => {
      const { link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      const first = await browser.request('GET', ConnectBrowser.local(link.url));

      expect(first.status).toBe(303);
      expect(first.headers.get('location')).toBe(`/connect/${link.id}`);
      expect(first.headers.get('referrer-policy')).toBe('no-referrer');
      expect(first.headers.get('cache-control')).toBe('no-store');
      const cookie = first.headers.get('set-cookie') as string;
      const token = new URL(link.url).searchParams.get('token') as string;
      expect(cookie).toContain(`patchbay_connect=${token}`);
      expect(cookie).toContain(`Path=/connect/${link.id}`);
      expect(cookie).toContain('HttpOnly');
      expect(cookie).toContain('SameSite=Lax');
      expect(cookie).toMatch(/Max-Age=(1[789]\d\d|1800)/);
      expect(cookie).not.toContain('Secure'); // PUBLIC_BASE_URL is http here; https gets Secure.
    });

    it('shows the app, the asking project and the owner, with the form of the scheme; escapes catalogue text', async () => {
      const { link } = await newLink('api_key');
      const page = await new ConnectBrowser(app).open(link.url);
      expect(page.status).toBe(200);
      expectPrivatePage(page);
      expect(page.text).toContain('<h1>Link your Acme CRM account</h1>');
      expect(page.text).toContain('Customers &#38; deals &#60;b&#62;in one place&#60;/b&#62;');
      expect(page.text).toContain(
        '<strong>Acme Assistant</strong> asks to link an Acme CRM account for <strong>alice@example.test</strong>',
      );
      expect(page.text).toMatch(/<input type="password" id="api_key" name="api_key" required autocomplete="off"/);
      expect(page.text).not.toContain('<script');
      expect(page.text).toContain('<link rel="stylesheet" href="/connect/assets/connect.css">');
    });

    it('serves its own stylesheet', async () => {
      const res = await fetch(`${app.url}/connect/assets/connect.css`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/css; charset=utf-8');
      expect(await res.text()).toContain('font-family');
    });

    it('404 page for an unknown link, a wrong token or a malformed id; nothing revealed', async () => {
      const { link } = await newLink('api_key');
      const wrongToken = await new ConnectBrowser(app).request('GET', `/connect/${link.id}?token=wrong`);
      expect(wrongToken.status).toBe(404);
      expect(wrongToken.text).toContain('Link not found');
      expect(wrongToken.headers.get('set-cookie')).toBeNull();
      expectPrivatePage(wrongToken);
      const unknown = await new ConnectBrowser(app).request(
        'GET',
        `/connect/00000000-0000-4000-8000-000000000000?token=${new URL(link.url).searchParams.get('token')}`,
      );
      expect(unknown.status).toBe(404);
      expect((await new ConnectBrowser(app).request('GET', '/connect/not-an-id?token=x')).status).toBe(404);
    });

    it('401 page without the cookie (the token-free URL opened elsewhere)', async () => {
      const { link } = await newLink('api_key');
      const page = await new ConnectBrowser(app).request('GET', `/connect/${link.id}`);
      expect(page.status).toBe(401);
      expect(page.text).toContain('Open the link again');
    });

    it('410 page for an expired link, nothing created', async () => {
      const { appName, link } = await newLink('no_auth');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      await app.dataSource
        .getRepository(ConnectLinkEntity)
        .update({ id: link.id }, { expires_at: new Date(Date.now() - 1000) });
      const posted = await browser.submit(page, {});
      expect(posted.status).toBe(410);
      expect(posted.text).toContain('Link expired');
      expect((await new ConnectBrowser(app).open(link.url)).status).toBe(410);
      expect(await accounts(appName)).toEqual([]);
    });
  });

  describe('api_key', () => {
    it('links the account with the sealed key, shows a confirmation, uses the link up; never echoes the key', async () => {
      const { appName, link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      const done = await browser.submit(page, { api_key: 'sk-connect-7f3a9b-secret' });

      expect(done.status).toBe(200);
      expectPrivatePage(done);
      expect(done.text).toContain('Account linked');
      expect(done.text).toContain('Your Acme CRM account is now linked.');
      expect(done.text).not.toContain('sk-connect-7f3a9b-secret');
      const [row] = await accounts(appName);
      expect(row).toMatchObject({
        project_id: project.projectId,
        linked_account_owner_id: 'alice@example.test',
        security_scheme: 'api_key',
        enabled: true,
      });
      expect(row.credentials).not.toContain('sk-connect-7f3a9b-secret');
      expect(credentialsOf(row)).toEqual({ api_key: 'sk-connect-7f3a9b-secret' });
      expect(await linkStatus(link.id)).toBe('completed');

      // Single use: posting again (same browser, same cookie) is refused and changes nothing.
      const again = await browser.submit(page, { api_key: 'sk-second-attempt' });
      expect(again.status).toBe(410);
      expect(again.text).toContain('Link already used');
      expect(credentialsOf((await accounts(appName))[0])).toEqual({ api_key: 'sk-connect-7f3a9b-secret' });
    });

    it('two simultaneous posts of the same link: exactly one completes it', async () => {
      const { appName, link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      const cookie = browser.cookie;
      const results = await Promise.all(
        ['sk-race-a', 'sk-race-b'].map((key) => {
          const twin = new ConnectBrowser(app);
          twin.cookie = cookie;
          return twin.submit(page, { api_key: key });
        }),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 410]);
      // Only the winner's key was stored: the loser was refused before anything was written.
      const winner = results[0].status === 200 ? 'sk-race-a' : 'sk-race-b';
      const rows = await accounts(appName);
      expect(rows).toHaveLength(1);
      expect(credentialsOf(rows[0])).toEqual({ api_key: winner });
      expect(await linkStatus(link.id)).toBe('completed');
    });

    it('re-linking keeps the linked account id and clears "needs re-linking"', async () => {
      const { appName, link } = await newLink('api_key');
      const existing = await app.ctx.newLinkedAccount(
        project.projectId,
        appName,
        { linked_account_owner_id: 'alice@example.test', needs_relink: true, enabled: true },
        { api_key: 'sk-old' },
      );
      const browser = new ConnectBrowser(app);
      const done = await browser.submit(await browser.open(link.url), { api_key: 'sk-new-after-relink' });
      expect(done.status).toBe(200);
      const rows = await accounts(appName);
      expect(rows).toHaveLength(1);
      expect(rows[0].id).toBe(existing.id);
      expect(rows[0].needs_relink).toBe(false);
      expect(credentialsOf(rows[0])).toEqual({ api_key: 'sk-new-after-relink' });
      const status = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
      expect(status.body.linked_account_id).toBe(existing.id);
    });

    it('an empty key shows the form again with the message; nothing stored, the link stays pending', async () => {
      const { appName, link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      for (const value of [undefined, '', '   ']) {
        const res = await browser.submit(page, value === undefined ? {} : { api_key: value });
        expect(res.status).toBe(422);
        // The message is tied to its input, which says it is invalid.
        expect(res.text).toContain('<p class="field-error" id="api_key-error">Enter your API key.</p>');
        expect(res.text).toMatch(/<input [^>]*id="api_key"[^>]* aria-invalid="true" aria-describedby="api_key-error">/);
      }
      expect(await accounts(appName)).toEqual([]);
      expect(await linkStatus(link.id)).toBe('pending');
    });

    it('goes to after_link_redirect_url with linked_account_id and status=success', async () => {
      const { appName, link } = await newLink('api_key', { after_link_redirect_url: `${ALLOWED}/settings?tab=apps` });
      const browser = new ConnectBrowser(app);
      const done = await browser.submit(await browser.open(link.url), { api_key: 'sk-redirected' });
      expect(done.status).toBe(303);
      const location = new URL(done.headers.get('location') as string);
      const [row] = await accounts(appName);
      expect(location.origin + location.pathname).toBe(`${ALLOWED}/settings`);
      expect(Object.fromEntries(location.searchParams)).toEqual({
        tab: 'apps',
        linked_account_id: row.id,
        status: 'success',
      });
      expect(done.headers.get('referrer-policy')).toBe('no-referrer');
    });
  });

  describe('http_basic, http_bearer, no_auth', () => {
    it('http_basic: user name and password, both required, password never echoed', async () => {
      const { appName, link } = await newLink('http_basic');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      expect(page.text).toContain('<input type="text" id="username" name="username"');
      expect(page.text).toContain('<input type="password" id="password" name="password"');

      const missing = await browser.submit(page, { username: 'alice', password: '' });
      expect(missing.status).toBe(422);
      expect(missing.text).toContain('<p class="field-error" id="password-error">Enter your password.</p>');
      expect(missing.text).toMatch(
        /<input [^>]*id="password"[^>]* aria-invalid="true" aria-describedby="password-error">/,
      );
      // Only the empty field is marked.
      expect(missing.text).not.toContain('username-error');
      expect(missing.text).not.toMatch(/id="username"[^>]*aria-invalid/);
      expect(await accounts(appName)).toEqual([]);

      const done = await browser.submit(page, { username: 'alice', password: 'pw-basic-5d1e' });
      expect(done.status).toBe(200);
      expect(done.text).not.toContain('pw-basic-5d1e');
      const [row] = await accounts(appName);
      expect(row.security_scheme).toBe('http_basic');
      expect(credentialsOf(row)).toEqual({ username: 'alice', password: 'pw-basic-5d1e' });
    });

    it('http_bearer: a token', async () => {
      const { appName, link } = await newLink('http_bearer');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      expect(page.text).toContain('<input type="password" id="token" name="token"');
      const empty = await browser.submit(page, { token: '' });
      expect(empty.status).toBe(422);
      expect(empty.text).toContain('<p class="field-error" id="token-error">Enter your token.</p>');
      const done = await browser.submit(page, { token: 'bearer-9c2f-token' });
      expect(done.status).toBe(200);
      const [row] = await accounts(appName);
      expect(row.security_scheme).toBe('http_bearer');
      expect(credentialsOf(row)).toEqual({ token: 'bearer-9c2f-token' });
    });

    it('no_auth: a confirmation button', async () => {
      const { appName, link } = await newLink('no_auth');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      expect(page.text).toContain('needs no credentials');
      expect(page.text).not.toContain('type="password"');
      const done = await browser.submit(page, {});
      expect(done.status).toBe(200);
      const [row] = await accounts(appName);
      expect(row.security_scheme).toBe('no_auth');
      expect(credentialsOf(row)).toEqual({});
    });
  });

  describe('cross-site posts and abuse', () => {
    it.each([
      ['another Origin', { origin: 'https://evil.example.test' }],
      ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site (a sibling subdomain)', { 'sec-fetch-site': 'same-site' }],
    ])('refuses a post with %s (403), nothing stored', async (_name, headers) => {
      const { appName, link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      const res = await browser.submit(page, { api_key: 'sk-csrf' }, headers);
      expect(res.status).toBe(403);
      expect(res.text).toContain('Request refused');
      expect(await accounts(appName)).toEqual([]);
      expect(await linkStatus(link.id)).toBe('pending');
    });

    it('accepts Origin: null (sent by browsers from a no-referrer page) with same-origin fetch metadata', async () => {
      const { appName, link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      const res = await browser.submit(
        page,
        { api_key: 'sk-null-origin' },
        { origin: 'null', 'sec-fetch-site': 'same-origin' },
      );
      expect(res.status).toBe(200);
      expect(await accounts(appName)).toHaveLength(1);
    });

    it('refuses a post without or with a wrong CSRF token (403) and one without the cookie (401)', async () => {
      const { appName, link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      await browser.open(link.url);
      const path = `/connect/${link.id}`;
      expect((await browser.request('POST', path, { form: { api_key: 'sk-x' } })).status).toBe(403);
      expect((await browser.request('POST', path, { form: { api_key: 'sk-x', csrf_token: 'forged' } })).status).toBe(
        403,
      );
      const stranger = new ConnectBrowser(app);
      expect((await stranger.request('POST', path, { form: { api_key: 'sk-x', csrf_token: 'forged' } })).status).toBe(
        401,
      );
      expect(await accounts(appName)).toEqual([]);
    });

    it('rate-limits posts per link (429 after 10 a minute)', async () => {
      const { appName, link } = await newLink('api_key');
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      for (let i = 0; i < 10; i += 1) {
        expect((await browser.submit(page, { api_key: '' })).status).toBe(422);
      }
      const limited = await browser.submit(page, { api_key: 'sk-valid-but-too-late' });
      expect(limited.status).toBe(429);
      expect(limited.text).toContain('Too many attempts');
      expect(await accounts(appName)).toEqual([]);
      // Other links are not affected.
      const other = await newLink('api_key');
      const otherBrowser = new ConnectBrowser(app);
      expect((await otherBrowser.submit(await otherBrowser.open(other.link.url), { api_key: 'sk-ok' })).status).toBe(
        200,
      );
    });
  });
});
