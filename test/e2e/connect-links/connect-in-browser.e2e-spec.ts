import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { CALLBACK_PATH, newOAuth2App } from '../oauth2/linking.js';
import { OidcServer } from '../oauth2/oidc-server.js';
import { CONNECT_LINKS, configuredApp, createLink } from './connect.js';
import { freePort } from '../../helpers/free-port.js';

/** Debian's chromium package, never a downloaded browser; `.ci/run` installs it when missing. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const hasChromium = existsSync(CHROMIUM);
const ARTEFACTS = join(process.cwd(), 'test-artefacts', 'connect-links');
const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const CLIENT = { client_id: 'connect-browser-client', client_secret: 'connect-browser-secret' };

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * Screenshots of the current page at desktop and phone widths (test artefacts, git-ignored) and an
 * axe-core audit at each width; serious and critical violations fail the test. axe is evaluated
 * through the DevTools protocol, which the page's strict CSP (no script at all) does not govern.
 */
async function inspect(page: Page, name: string): Promise<void> {
  mkdirSync(ARTEFACTS, { recursive: true });
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(ARTEFACTS, `${name}-${label}.png`), fullPage: true });
    await page.evaluate(AXE_SOURCE);
    // Strings: they run in the page, whose globals (axe, document) this file's types do not know.
    const violations = await page.evaluate<AxeViolation[]>(
      'axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))',
    );
    const blocking = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(blocking, `${name} at ${label} width: ${JSON.stringify(violations)}`).toEqual([]);
  }
  // The phone layout must not scroll sideways.
  await page.setViewportSize(WIDTHS.phone);
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow, `${name} scrolls sideways on a phone`).toBeLessThanOrEqual(0);
  await page.setViewportSize(WIDTHS.desktop);
}

const title = (what: string) =>
  hasChromium ? what : `SKIPPED because ${CHROMIUM} is absent (install Debian's chromium package): ${what}`;

// Screenshots and axe audits at two widths take ~10 s per page when the 2-core machine is busy: a wider budget.
describe('connect links in headless Chromium', { timeout: 120_000 }, () => {
  let app: TestApp;
  let oidc: OidcServer;
  let project: TestProject;
  let browser: Browser | undefined;
  let base: string;
  /** The developer's own site, on another origin: where `after_link_redirect_url` sends the browser. */
  let developerSite: Server;
  let developerOrigin: string;
  const developerVisits: string[] = [];

  beforeAll(async () => {
    developerSite = createServer((request, response) => {
      developerVisits.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html lang="en"><title>Back at Acme</title><h1>Back at Acme</h1></html>');
    });
    await new Promise<void>((resolve) => developerSite.listen(0, '127.0.0.1', resolve));
    developerOrigin = `http://127.0.0.1:${(developerSite.address() as AddressInfo).port}`;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // The OAuth 2.0 return and the cookie need the browser on PUBLIC_BASE_URL itself.
    app = await TestApp.start({ PUBLIC_BASE_URL: base, OAUTH2_REDIRECT_ALLOWED_ORIGINS: developerOrigin }, { port });
    project = await app.ctx.newProject('Acme Assistant');
    oidc = await OidcServer.start([{ ...CLIENT, redirect_uris: [`${base}${CALLBACK_PATH}`] }]);
    if (hasChromium) {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    }
  });

  afterAll(async () => {
    await browser?.close();
    await oidc.close();
    await app.close();
    await new Promise((resolve) => developerSite.close(resolve));
  });

  it.skipIf(!hasChromium)(
    title('after_link_redirect_url on another origin: the browser lands there after linking (the CSP allows it)'),
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
      expect(developerVisits.some((visit) => visit.startsWith('/integrations?'))).toBe(true);
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
    title('API key: open the link, fill and submit the form, see the success page and the account through the API'),
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
      await inspect(page, 'api-key-form');

      // Spaces pass the browser's `required` check; the server answers with the form and a message.
      await page.fill('#api_key', '   ');
      await page.click('button[type="submit"]');
      await page.waitForSelector('.error');
      expect(await page.textContent('.error')).toBe('API key is required.');
      expect(await page.inputValue('#api_key')).toBe('');
      await inspect(page, 'api-key-error');

      await page.fill('#api_key', 'sk-browser-3e8d1c');
      await page.click('button[type="submit"]');
      await page.waitForSelector('.success');
      expect(await page.textContent('h1')).toBe('Account linked');
      expect(await page.content()).not.toContain('sk-browser-3e8d1c');
      await inspect(page, 'success');

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
      await inspect(page, 'used');

      const unknown = await page.goto(`${base}/connect/00000000-0000-4000-8000-000000000000?token=nope`);
      expect(unknown?.status()).toBe(404);
      await inspect(page, 'not-found');
      await context.close();
    },
  );

  it.skipIf(!hasChromium)(title('the forms of http_basic, http_bearer and no_auth'), async () => {
    for (const scheme of ['http_basic', 'http_bearer', 'no_auth'] as const) {
      const catalogApp = await configuredApp(app, project.apiKey, scheme, { display_name: `Acme ${scheme}` });
      const link = await createLink(app, project.apiKey, { app_name: catalogApp.name, linked_account_owner_id: 'bob' });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      expect((await page.goto(link.url))?.status()).toBe(200);
      await inspect(page, `${scheme.replace('_', '-')}-form`);
      await context.close();
    }
  });

  it.skipIf(!hasChromium)(
    title('OAuth 2.0: click through the provider and come back to the success page'),
    async () => {
      const calendar = await newOAuth2App(app, project.apiKey, {
        scheme: oidc.scheme(),
        override: { ...CLIENT, redirect_url: `${base}${CALLBACK_PATH}` },
      });
      const link = await createLink(app, project.apiKey, { app_name: calendar.name, linked_account_owner_id: 'carol' });
      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      await page.goto(link.url);
      await inspect(page, 'oauth2');

      await page.click('button[type="submit"]');
      // The provider's sign-in page, then its consent page.
      await page.fill('input[name="login"]', 'carol');
      await page.fill('input[name="password"]', 'correct horse battery staple');
      await page.click('button[type="submit"]');
      await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
      await page.click('button[type="submit"]');
      await page.waitForURL((url) => url.pathname === `/connect/${link.id}/oauth2-return`);
      expect(await page.textContent('h1')).toBe('Account linked');
      await inspect(page, 'oauth2-success');
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
