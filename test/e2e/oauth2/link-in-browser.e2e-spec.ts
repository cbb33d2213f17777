import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumTitle, hasChromium, launchChromium } from '../../helpers/chromium.js';
import { auditPage } from '../../helpers/page-audit.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { CALLBACK_PATH, newOAuth2App, startLinking } from './linking.js';
import { OidcServer } from './oidc-server.js';

const title = chromiumTitle(
  'links an account in a real browser: provider sign-in and consent pages, then the callback page',
);

describe('OAuth 2.0 linking in headless Chromium', { timeout: 120_000 }, () => {
  let app: TestApp;
  let oidc: OidcServer;
  let project: TestProject;
  let browser: Browser | undefined;

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject();
    // The browser must land on this very service: its address is known only once it listens.
    const redirectUri = `${app.url}${CALLBACK_PATH}`;
    oidc = await OidcServer.start([
      { client_id: 'browser-client', client_secret: 'browser-secret', redirect_uris: [redirectUri] },
    ]);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await oidc.close();
    await app.close();
  });

  it.skipIf(!hasChromium)(title, async () => {
    const calendar = await newOAuth2App(app, project.apiKey, {
      scheme: oidc.scheme(),
      override: {
        client_id: 'browser-client',
        client_secret: 'browser-secret',
        redirect_url: `${app.url}${CALLBACK_PATH}`,
      },
    });
    const url = await startLinking(app, project.apiKey, {
      app_name: calendar.name,
      linked_account_owner_id: 'browser-user',
    });

    // The developer's branding and home URL (http on a loopback address is allowed).
    const branded = await app.patch(
      '/v1/project',
      { display_name: 'Acme Assistant', accent_color: '#0f766e', home_url: 'http://127.0.0.1:9/home' },
      { apiKey: project.apiKey },
    );
    expect(branded.status, branded.text).toBe(200);

    const page = await (browser as Browser).newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) {
        blocked.push(message.text());
      }
    });
    // First the user declines at the provider: the callback page says so in plain words, with the way back.
    await page.goto(url);
    await page.fill('input[name="login"]', 'browser-user');
    await page.fill('input[name="password"]', 'correct horse battery staple');
    await page.click('button[type="submit"]');
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    const consentAction = (await page.getAttribute('form', 'action')) as string;
    await page.goto(new URL(`${new URL(consentAction, oidc.issuer).pathname}/abort`, oidc.issuer).href);
    await page.waitForURL((current) => current.pathname === CALLBACK_PATH);
    expect(await page.textContent('h1')).toBe('Linking failed');
    expect(await page.textContent('.error')).toBe('You declined access, so nothing was linked.');
    expect(await page.textContent('.note')).toContain('access_denied');
    expect(await page.textContent('header.brand')).toBe('Acme Assistant');
    expect(await page.getAttribute('a.button', 'href')).toBe('http://127.0.0.1:9/home');
    await auditPage(page, 'oauth2', 'declined');

    // Then links: the provider's consent page, then the callback page.
    await page.goto(
      await startLinking(app, project.apiKey, { app_name: calendar.name, linked_account_owner_id: 'browser-user' }),
    );
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    await page.click('button[type="submit"]');
    await page.waitForURL((current) => current.pathname === CALLBACK_PATH);

    expect(await page.textContent('h1')).toBe('Account linked');
    expect(await page.textContent('.success')).toBe(`Your ${calendar.display_name} account is now linked.`);
    expect(await page.textContent('a.button')).toBe('Back to Acme Assistant');
    expect(await page.evaluate<string>("getComputedStyle(document.querySelector('a.button')).backgroundColor")).toBe(
      'rgb(15, 118, 110)',
    );
    await auditPage(page, 'oauth2', 'linked');
    expect(blocked).toEqual([]);
    await page.close();

    const listed = await app.get('/v1/linked-accounts', {
      apiKey: project.apiKey,
      query: { app_name: calendar.name, linked_account_owner_id: 'browser-user' },
    });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      expect.objectContaining({
        app_name: calendar.name,
        linked_account_owner_id: 'browser-user',
        security_scheme: 'oauth2',
        enabled: true,
      }),
    ]);
    expect(oidc.tokenRequests.map((r) => r.form.grant_type)).toEqual(['authorization_code']);
  });
});
