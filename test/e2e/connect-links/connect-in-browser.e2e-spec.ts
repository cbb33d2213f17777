import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumTitle,
  hasChromium,
  type LandingSite,
  launchChromium,
  startLandingSite,
} from '../../helpers/chromium.js';
import { auditPage } from '../../helpers/page-audit.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { CALLBACK_PATH, newOAuth2App } from '../oauth2/linking.js';
import { OidcServer } from '../oauth2/oidc-server.js';
import { CONNECT_LINKS, configuredApp, createLink } from './connect.js';
import { freePort } from '../../helpers/free-port.js';

const CLIENT = { client_id: 'connect-browser-client', client_secret: 'connect-browser-secret' };
/** A 24×24 violet square with a white cross: the developer's logo, as a data: URL (the pages' img-src allows data: and the logo's address). */
const LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABgAAAAYCAIAAABvFaqvAAAAeUlEQVR42rWVSxKAIAxDcxwv54E5DbpRGBwg1EeHFaQp9BOUHzuPFFivu3JlYZaWaImrcdR3K8By76h3sMRSiHyuHkwOyAHIh47DyAw7vaycRDjpk5nUaRHkl3ncFvuJmKcxyWbKzzQkMyLM0DIywggbJrW8+P/8ji5AdohlV01BOgAAAABJRU5ErkJggg==';
const ACCENT = '#6d28d9';

// Screenshots and axe audits at two widths take ~10 s per page when the 2-core machine is busy: a wider budget.
describe('connect links in headless Chromium', { timeout: 120_000 }, () => {
  let app: TestApp;
  let oidc: OidcServer;
  let project: TestProject;
  let browser: Browser | undefined;
  let base: string;
  /** The developer's own site, on another origin: where `after_link_redirect_url` sends the browser. */
  let developerSite: LandingSite;
  let developerOrigin: string;

  beforeAll(async () => {
    developerSite = await startLandingSite('Back at Acme');
    developerOrigin = developerSite.origin;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The OAuth 2.0 return and the cookie need the browser on PUBLIC_BASE_URL itself.
    app = await TestApp.start({ PUBLIC_BASE_URL: base, OAUTH2_REDIRECT_ALLOWED_ORIGINS: developerOrigin }, { port });
    project = await app.ctx.newProject('Acme Assistant');
    oidc = await OidcServer.start([{ ...CLIENT, redirect_uris: [`${base}${CALLBACK_PATH}`] }]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await oidc.close();
    await app.close();
    await developerSite.close();
  });

  it.skipIf(!hasChromium)(
    chromiumTitle(
      'after_link_redirect_url on another origin: the browser lands there after linking (the CSP allows it)',
    ),
    async () => {
      const catalogApp = await configuredApp(app, project.apiKey, 'api_key', { display_name: 'Acme Redirect' });
      const link = await createLink(app, project.apiKey, {
        app_name: catalogApp.name,
        linked_account_owner_id: 'dora',
        after_link_redirect_url: `${developerOrigin}/integrations?tab=apps`,
      });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (message.text().includes('Content Security Policy')) {
          blocked.push(message.text());
        }
      });
      await page.goto(link.url);
      await page.fill('#api_key', 'sk-redirect-51f0');
      await page.click('button[type="submit"]');
      await page.waitForURL((url) => url.origin === developerOrigin, { timeout: 10_000 });
      const landed = new URL(page.url());
      expect(landed.pathname).toBe('/integrations');
      expect(landed.searchParams.get('tab')).toBe('apps');
      expect(landed.searchParams.get('status')).toBe('success');
      expect(await page.textContent('h1')).toBe('Back at Acme');
      expect(blocked).toEqual([]);
      const status = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
      expect(status.body.status).toBe('completed');
      expect(landed.searchParams.get('linked_account_id')).toBe(status.body.linked_account_id);
      expect(developerSite.visits.some((visit) => visit.startsWith('/integrations?'))).toBe(true);
      await context.close();
      // Only that origin is added to form-action; everything else stays as strict.
      const other = await createLink(app, project.apiKey, {
        app_name: catalogApp.name,
        linked_account_owner_id: 'dora',
        after_link_redirect_url: `${developerOrigin}/integrations`,
      });
      const fresh = await (browser as Browser).newContext();
      const response = await (await fresh.newPage()).goto(other.url);
      expect(response?.headers()['content-security-policy']).toBe(
        `default-src 'none'; style-src 'self'; img-src data:; form-action 'self' ${developerOrigin}; ` +
          "frame-ancestors 'none'; base-uri 'none'",
      );
      await fresh.close();
    },
  );

  it.skipIf(!hasChromium)(
    chromiumTitle(
      "branded page: the developer's name, logo and colour, the user's display name, an article by sound, the " +
        "catalogue's hint, field errors tied to their inputs, and Back to the app after linking",
    ),
    async () => {
      const branded = await app.ctx.newProject('acme-production');
      const brandingSet = await app.patch(
        '/v1/project',
        { display_name: 'Acme Assistant', logo_url: LOGO, accent_color: ACCENT, home_url: `${developerOrigin}/home` },
        { apiKey: branded.apiKey },
      );
      expect(brandingSet.status, brandingSet.text).toBe(200);
      const catalogApp = await configuredApp(app, branded.apiKey, 'api_key', {
        display_name: 'Airtable',
        description: 'Bases, tables and records that work like a spreadsheet.',
        security_schemes: {
          api_key: {
            location: 'header',
            name: 'Authorization',
            prefix: 'Bearer',
            hint: 'Create a personal access token under Builder hub → Personal access tokens.',
            hint_url: 'https://airtable.com/create/tokens',
          },
          no_auth: {},
        },
      });
      const link = await createLink(app, branded.apiKey, {
        app_name: catalogApp.name,
        linked_account_owner_id: 'usr_7f3a91',
        owner_display_name: 'Alice Martin',
      });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (message.text().includes('Content Security Policy')) {
          blocked.push(message.text());
        }
      });
      const opened = await page.goto(link.url);
      const csp = opened?.headers()['content-security-policy'] ?? '';
      expect(csp).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).not.toContain('script-src');

      // The developer's app: its name and logo at the top, its colour on the button (the inline style applied).
      expect(await page.textContent('header.brand')).toBe('Acme Assistant');
      expect(await page.evaluate<number>("document.querySelector('header.brand img').naturalWidth")).toBe(24);
      expect(await page.evaluate<string>("getComputedStyle(document.querySelector('button')).backgroundColor")).toBe(
        'rgb(109, 40, 217)',
      );
      // The user by the name the developer gave, never the raw id; "an Airtable".
      expect(await page.textContent('.request')).toBe(
        'Acme Assistant asks to link an Airtable account for Alice Martin.',
      );
      expect(await page.content()).not.toContain('usr_7f3a91');
      // Where to find the key, from the catalogue, tied to the input.
      expect(await page.textContent('#credentials-hint')).toContain('Builder hub → Personal access tokens.');
      expect(await page.getAttribute('#credentials-hint a', 'href')).toBe('https://airtable.com/create/tokens');
      expect(await page.textContent('#credentials-hint a')).toBe('Open it on Airtable');
      expect(await page.getAttribute('#api_key', 'aria-describedby')).toBe('credentials-hint');
      expect(await page.getAttribute('#api_key', 'aria-invalid')).toBeNull();
      await auditPage(page, 'connect-links', 'branded-form');

      // A blank key: the message sits under the input, which says it is invalid and points to the message.
      await page.fill('#api_key', '   ');
      await page.click('button[type="submit"]');
      await page.waitForSelector('.field-error');
      expect(await page.getAttribute('#api_key', 'aria-invalid')).toBe('true');
      expect(await page.getAttribute('#api_key', 'aria-describedby')).toBe('api_key-error credentials-hint');
      expect(await page.textContent('#api_key-error')).toBe('Enter your API key.');
      await auditPage(page, 'connect-links', 'branded-field-error');

      await page.fill('#api_key', 'pat-branded-8c1d');
      await page.click('button[type="submit"]');
      await page.waitForSelector('.success');
      expect(await page.textContent('.success')).toBe('Your Airtable account is now linked.');
      const back = page.locator('a.button');
      expect(await back.textContent()).toBe('Back to Acme Assistant');
      expect(await back.getAttribute('href')).toBe(`${developerOrigin}/home`);
      await auditPage(page, 'connect-links', 'branded-success');
      await back.click();
      await page.waitForURL(`${developerOrigin}/home`);
      expect(blocked).toEqual([]);
      await context.close();
    },
  );

  it.skipIf(!hasChromium)(
    chromiumTitle(
      "expired and revoked links: a page that says so, branded, with the way back (the link's own or the home URL)",
    ),
    async () => {
      const branded = await app.ctx.newProject('acme-staging');
      await app.patch(
        '/v1/project',
        { display_name: 'Acme Assistant', accent_color: '#ffd60a', home_url: `${developerOrigin}/home` },
        { apiKey: branded.apiKey },
      );
      const catalogApp = await configuredApp(app, branded.apiKey, 'api_key', { display_name: 'GitHub' });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();

      const revoked = await createLink(app, branded.apiKey, {
        app_name: catalogApp.name,
        linked_account_owner_id: 'erin',
        after_link_redirect_url: `${developerOrigin}/integrations`,
      });
      await page.goto(revoked.url);
      expect(await page.textContent('.request')).toContain('asks to link a GitHub account for erin');
      expect((await app.request('DELETE', `${CONNECT_LINKS}/${revoked.id}`, { apiKey: branded.apiKey })).status).toBe(
        204,
      );
      expect((await page.reload())?.status()).toBe(410);
      expect(await page.textContent('h1')).toBe('Link revoked');
      expect(await page.getAttribute('a.button', 'href')).toBe(`${developerOrigin}/integrations`);
      // A light accent gets dark text on its buttons (contrast checked by axe).
      expect(await page.evaluate<string>("getComputedStyle(document.querySelector('a.button')).color")).toBe(
        'rgb(0, 0, 0)',
      );
      await auditPage(page, 'connect-links', 'revoked');

      const expired = await createLink(app, branded.apiKey, {
        app_name: catalogApp.name,
        linked_account_owner_id: 'erin',
      });
      await app.dataSource.query(`UPDATE connect_links SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        expired.id,
      ]);
      expect((await page.goto(expired.url))?.status()).toBe(410);
      expect(await page.textContent('h1')).toBe('Link expired');
      expect(await page.textContent('header.brand')).toBe('Acme Assistant');
      const back = page.locator('a.button');
      expect(await back.textContent()).toBe('Back to Acme Assistant');
      await auditPage(page, 'connect-links', 'expired');
      await back.click();
      await page.waitForURL(`${developerOrigin}/home`);

      // A wrong token shows no branding: the 404 tells nothing about the link.
      const pending = await createLink(app, branded.apiKey, {
        app_name: catalogApp.name,
        linked_account_owner_id: 'erin',
      });
      expect((await page.goto(`${base}/connect/${pending.id}?token=wrong`))?.status()).toBe(404);
      expect(await page.locator('header.brand').count()).toBe(0);
      expect(await page.locator('a.button').count()).toBe(0);
      await context.close();
    },
  );

  it.skipIf(!hasChromium)(
    chromiumTitle(
      'API key: open the link, fill and submit the form, see the success page and the account through the API',
    ),
    async () => {
      const catalogApp = await configuredApp(app, project.apiKey, 'api_key', {
        display_name: 'Acme CRM',
        description: 'Customers, deals and invoices in one place.',
      });
      const link = await createLink(app, project.apiKey, {
        app_name: catalogApp.name,
        linked_account_owner_id: 'alice@example.test',
      });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));

      const opened = await page.goto(link.url);
      expect(opened?.status()).toBe(200);
      expect(page.url()).toBe(`${base}/connect/${link.id}`);
      expect(await page.textContent('h1')).toBe('Link your Acme CRM account');
      const cookies = await context.cookies();
      expect(cookies).toEqual([
        expect.objectContaining({
          name: 'patchbay_connect',
          httpOnly: true,
          sameSite: 'Lax',
          path: `/connect/${link.id}`,
        }),
      ]);
      await auditPage(page, 'connect-links', 'api-key-form');

      // Spaces pass the browser's `required` check; the server answers with the form and a message.
      await page.fill('#api_key', '   ');
      await page.click('button[type="submit"]');
      await page.waitForSelector('.field-error');
      expect(await page.textContent('#api_key-error')).toBe('Enter your API key.');
      expect(await page.getAttribute('#api_key', 'aria-invalid')).toBe('true');
      expect(await page.inputValue('#api_key')).toBe('');
      await auditPage(page, 'connect-links', 'api-key-error');

      await page.fill('#api_key', 'sk-browser-3e8d1c');
      await page.click('button[type="submit"]');
      await page.waitForSelector('.success');
      expect(await page.textContent('h1')).toBe('Account linked');
      expect(await page.content()).not.toContain('sk-browser-3e8d1c');
      await auditPage(page, 'connect-links', 'success');

      const status = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
      expect(status.body.status).toBe('completed');
      const account = await app.get(`/v1/linked-accounts/${status.body.linked_account_id}`, { apiKey: project.apiKey });
      expect(account.body).toMatchObject({
        app_name: catalogApp.name,
        linked_account_owner_id: 'alice@example.test',
        security_scheme: 'api_key',
      });
      // Everything came from Patchbay itself.
      expect(requests.every((url) => url.startsWith(base))).toBe(true);

      // The link is used up: opening it again shows a page that says so.
      const again = await page.goto(link.url);
      expect(again?.status()).toBe(410);
      expect(await page.textContent('h1')).toBe('Link already used');
      await auditPage(page, 'connect-links', 'used');

      const unknown = await page.goto(`${base}/connect/00000000-0000-4000-8000-000000000000?token=nope`);
      expect(unknown?.status()).toBe(404);
      await auditPage(page, 'connect-links', 'not-found');
      await context.close();
    },
  );

  it.skipIf(!hasChromium)(chromiumTitle('the forms of http_basic, http_bearer and no_auth'), async () => {
    for (const scheme of ['http_basic', 'http_bearer', 'no_auth'] as const) {
      const catalogApp = await configuredApp(app, project.apiKey, scheme, { display_name: `Acme ${scheme}` });
      const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'bob' });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      expect((await page.goto(link.url))?.status()).toBe(200);
      await auditPage(page, 'connect-links', `${scheme.replace('_', '-')}-form`);
      await context.close();
    }
  });

  it.skipIf(!hasChromium)(
    chromiumTitle('OAuth 2.0: click through the provider and come back to the success page'),
    async () => {
      const calendar = await newOAuth2App(app, project.apiKey, {
        scheme: oidc.scheme({ scope_descriptions: { 'calendar.read': 'See your calendars and events' } }),
        override: { ...CLIENT, redirect_url: `${base}${CALLBACK_PATH}` },
      });
      const link = await createLink(app, project.apiKey, { app_name: calendar.name, linked_account_owner_id: 'carol' });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      await page.goto(link.url);
      // What the app will be able to do: the catalogue's plain words, else the scope itself.
      expect(await page.textContent('h2')).toBe('Acme Assistant will be able to');
      expect(await page.locator('ul.scopes li').allTextContents()).toEqual([
        'See your calendars and events',
        'offline_access',
      ]);
      await auditPage(page, 'connect-links', 'oauth2');

      // The user declines at the provider: back on the page, plain words, and the link still usable.
      await page.click('button[type="submit"]');
      await page.fill('input[name="login"]', 'carol');
      await page.fill('input[name="password"]', 'correct horse battery staple');
      await page.click('button[type="submit"]');
      await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
      const consentAction = (await page.getAttribute('form', 'action')) as string;
      await page.goto(new URL(`${new URL(consentAction, oidc.issuer).pathname}/abort`, oidc.issuer).href);
      await page.waitForURL((url) => url.pathname === `/connect/${link.id}/oauth2-return`);
      expect(await page.textContent('.error')).toBe('You declined access, so nothing was linked.');
      expect(await page.content()).not.toContain('access_denied');
      await auditPage(page, 'connect-links', 'oauth2-declined');
      await page.goto(`${base}/connect/${link.id}`);

      // Again: the provider remembers the sign-in and asks for consent only.
      await page.click('button[type="submit"]');
      await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
      await page.click('button[type="submit"]');
      await page.waitForURL((url) => url.pathname === `/connect/${link.id}/oauth2-return`);
      expect(await page.textContent('h1')).toBe('Account linked');
      await auditPage(page, 'connect-links', 'oauth2-success');
      await context.close();

      const status = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
      expect(status.body.status).toBe('completed');
      const account = await app.get(`/v1/linked-accounts/${status.body.linked_account_id}`, { apiKey: project.apiKey });
      expect(account.body).toMatchObject({
        app_name: calendar.name,
        linked_account_owner_id: 'carol',
        security_scheme: 'oauth2',
      });
    },
  );
});
