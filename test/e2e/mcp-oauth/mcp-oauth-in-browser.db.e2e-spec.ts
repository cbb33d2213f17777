import { createHash, randomBytes } from 'node:crypto';
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
import { executionScenario } from '../../factories/execution.factory.js';
import { freePort } from '../../helpers/free-port.js';
import { TestApp } from '../../helpers/test-app.js';
import type { OidcServer } from '../oauth2/oidc-server.js';
import { IDP_CLIENT, startIdentityProvider } from './mcp-oauth.js';

/** A 24×24 violet square with a white cross: the developer's logo, as a data: URL. */
const LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABgAAAAYCAIAAABvFaqvAAAAeUlEQVR42rWVSxKAIAxDcxwv54E5DbpRGBwg1EeHFaQp9BOUHzuPFFivu3JlYZaWaImrcdR3K8By76h3sMRSiHyuHkwOyAHIh47DyAw7vaycRDjpk5nUaRHkl3ncFvuJmKcxyWbKzzQkMyLM0DIywggbJrW8+P/8ji5AdohlV01BOgAAAABJRU5ErkJggg==';

describe('MCP sign-in and consent in headless Chromium', { timeout: 120_000 }, () => {
  let app: TestApp;
  let base: string;
  let idp: OidcServer;
  let projectId: string;
  let browser: Browser | undefined;
  /** The MCP client's loopback redirect URI (a desktop client's), recording what it receives. */
  let clientSite: LandingSite;
  let redirectUri: string;

  beforeAll(async () => {
    clientSite = await startLandingSite('Connected');
    redirectUri = `${clientSite.origin}/callback`;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await TestApp.start({ PUBLIC_BASE_URL: base }, { port });
    let apiKey: string;
    ({ projectId, apiKey } = await app.ctx.newProject('Acme Assistant'));
    for (const name of ['Acme CRM', 'Acme Mail']) {
      const scenario = await executionScenario(app, { projectId, scheme: 'no_auth' });
      await app.dataSource.query('UPDATE apps SET display_name = $1 WHERE name = $2', [name, scenario.app.name]);
    }
    const branded = await app.patch(
      '/v1/project',
      {
        display_name: 'Acme',
        logo_url: LOGO,
        accent_color: '#b45309',
        home_url: 'https://app.acme.example/home',
      },
      { apiKey },
    );
    expect(branded.status, branded.text).toBe(200);
    idp = await startIdentityProvider(app, projectId);
    const set = await app.put(
      '/v1/mcp/identity-provider',
      { issuer: idp.issuer, ...IDP_CLIENT, scopes: 'openid email profile', owner_claim: 'email' },
      { apiKey },
    );
    expect(set.status, set.text).toBe(200);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await app?.close();
    await clientSite?.close();
  });

  it.skipIf(!hasChromium)(
    chromiumTitle('sign in at the identity provider, consent on Patchbay, land on the client with a code and iss'),
    async () => {
      const mcpUrl = `${base}/v1/mcp/p/${projectId}`;
      const registered = await fetch(`${mcpUrl}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Claude',
          client_uri: 'https://claude.ai',
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: 'none',
        }),
      });
      expect(registered.status).toBe(201);
      const { client_id } = (await registered.json()) as { client_id: string };
      const verifier = randomBytes(32).toString('base64url');
      const start = new URL(`${mcpUrl}/auth`);
      start.search = new URLSearchParams({
        client_id,
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'mcp',
        state: 'browser-state',
        resource: mcpUrl,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();

      const context = await (browser as Browser).newContext();
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (message.text().includes('Content Security Policy')) {
          blocked.push(message.text());
        }
      });
      await page.goto(start.href);
      // The identity provider's own sign-in, then its consent.
      await page.fill('input[name="login"]', 'alice');
      await page.fill('input[name="password"]', 'any password');
      await page.click('button[type="submit"]');
      await page.waitForSelector('input[name="prompt"][value="consent"]', { state: 'attached' });
      await page.click('button[type="submit"]');
      await page.waitForURL((url) => url.origin === base && url.pathname.includes('/interaction/'));
      // The developer's app by its display name, with its colour.
      expect(await page.textContent('h1')).toBe('Allow Claude to use Acme?');
      expect(await page.textContent('header.brand')).toBe('Acme');
      expect(await page.evaluate<number>("document.querySelector('header.brand img').naturalWidth")).toBe(24);
      expect(
        await page.evaluate<string>("getComputedStyle(document.querySelector('button[value=allow]')).backgroundColor"),
      ).toBe('rgb(180, 83, 9)');
      const text = await page.textContent('main');
      // The user by the name the identity provider gives (profile scope), with the id the sign-in proved.
      expect(await page.textContent('.request')).toContain('asks to act as Alice Example (alice@example.test)');
      expect(text).toContain('alice@example.test');
      expect(text).toContain('https://claude.ai');
      expect(text).toContain('Acme CRM');
      expect(text).toContain('Acme Mail');
      await auditPage(page, 'mcp-oauth', 'consent');

      await page.click('button[value="allow"]');
      await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 10_000 });
      const landed = new URL(page.url());
      expect(landed.searchParams.get('state')).toBe('browser-state');
      expect(landed.searchParams.get('iss')).toBe(mcpUrl);
      expect(landed.searchParams.get('code')).toBeTruthy();
      expect(blocked).toEqual([]);
      expect(clientSite.visits.some((url) => url.startsWith('/callback?'))).toBe(true);

      // An unregistered redirect: a page in plain words, no redirect.
      start.searchParams.set('redirect_uri', 'https://evil.example/callback');
      const refused = await page.goto(start.href);
      expect(refused?.status()).toBe(400);
      expect(new URL(page.url()).origin).toBe(base);
      expect(await page.textContent('main')).toContain('did not register');
      // The way back to the developer's app.
      expect(await page.getAttribute('a.button', 'href')).toBe('https://app.acme.example/home');
      expect(await page.textContent('a.button')).toBe('Back to Acme');
      await auditPage(page, 'mcp-oauth', 'refused-redirect');
      await context.close();
    },
  );
});
