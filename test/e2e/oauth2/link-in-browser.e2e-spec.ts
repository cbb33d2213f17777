import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { CALLBACK_PATH, newOAuth2App, startLinking } from './linking.js';
import { OidcServer } from './oidc-server.js';

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
const title = hasChromium
  ? 'links an account in a real browser: provider sign-in and consent pages, then the callback page'
  : `SKIPPED because ${CHROMIUM} is absent (install Debian's chromium package; .ci/run does): links an account in a real browser`;

describe('OAuth 2.0 linking in headless Chromium', () => {
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
    if (hasChromium) {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    }
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

    const page = await (browser as Browser).newPage();
    await page.goto(url);
    // The provider's sign-in page, then its consent page.
    await page.fill('input[name="login"]', 'browser-user');
    await page.fill('input[name="password"]', 'correct horse battery staple');
    await page.click('button[type="submit"]');
    await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
    await page.click('button[type="submit"]');
    await page.waitForURL((current) => current.pathname === CALLBACK_PATH);

    expect(await page.textContent('h1')).toBe('Account linked');
    expect(await page.textContent('p')).toContain(`Your ${calendar.name} account is now linked.`);
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
