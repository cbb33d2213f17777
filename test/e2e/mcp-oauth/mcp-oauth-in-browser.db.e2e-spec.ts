import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionScenario } from '../../factories/execution.factory.js';
import { freePort } from '../../helpers/free-port.js';
import { TestApp } from '../../helpers/test-app.js';
import type { OidcServer } from '../oauth2/oidc-server.js';
import { IDP_CLIENT, startIdentityProvider } from './mcp-oauth.js';

/** Debian's chromium package, never a downloaded browser (DESIGN.md). */
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
const ARTEFACTS = join(process.cwd(), 'test-artefacts', 'mcp-oauth');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** A 24×24 violet square with a white cross: the developer's logo, as a data: URL. */
const LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABgAAAAYCAIAAABvFaqvAAAAeUlEQVR42rWVSxKAIAxDcxwv54E5DbpRGBwg1EeHFaQp9BOUHzuPFFivu3JlYZaWaImrcdR3K8By76h3sMRSiHyuHkwOyAHIh47DyAw7vaycRDjpk5nUaRHkl3ncFvuJmKcxyWbKzzQkMyLM0DIywggbJrW8+P/8ji5AdohlV01BOgAAAABJRU5ErkJggg==';
const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

/** Screenshots at two widths (git-ignored artefacts), axe-core without serious or critical findings, no sideways scroll. */
async function inspect(page: Page, name: string): Promise<void> {
  mkdirSync(ARTEFACTS, { recursive: true });
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(ARTEFACTS, `${name}-${label}.png`), fullPage: true });
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate<{ id: string; impact: string | null }[]>(
      'axe.run(document).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))',
    );
    const blocking = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(blocking, `${name} at ${label}: ${JSON.stringify(violations)}`).toEqual([]);
  }
  await page.setViewportSize(WIDTHS.phone);
  expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(
    0,
  );
  await page.setViewportSize(WIDTHS.desktop);
}

const title = (what: string) =>
  hasChromium ? what : `SKIPPED because ${CHROMIUM} is absent (install Debian's chromium package): ${what}`;

describe('MCP sign-in and consent in headless Chromium', { timeout: 120_000 }, () => {
  let app: TestApp;
  let base: string;
  let idp: OidcServer;
  let projectId: string;
  let browser: Browser | undefined;
  /** The MCP client's loopback redirect URI (a desktop client's), recording what it receives. */
  let clientSite: Server;
  let redirectUri: string;
  const received: string[] = [];

  beforeAll(async () => {
    clientSite = createServer((request, response) => {
      received.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><html lang="en"><title>Agent</title><h1>Connected</h1></html>');
    });
    await new Promise<void>((resolve) => clientSite.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(clientSite.address() as AddressInfo).port}/callback`;
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
    if (hasChromium) {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    }
  });

  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await app?.close();
    await new Promise((resolve) => clientSite?.close(resolve));
  });

  it.skipIf(!hasChromium)(
    title('sign in at the identity provider, consent on Patchbay, land on the client with a code and iss'),
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
      await inspect(page, 'consent');

      await page.click('button[value="allow"]');
      await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 10_000 });
      const landed = new URL(page.url());
      expect(landed.searchParams.get('state')).toBe('browser-state');
      expect(landed.searchParams.get('iss')).toBe(mcpUrl);
      expect(landed.searchParams.get('code')).toBeTruthy();
      expect(blocked).toEqual([]);
      expect(received.some((url) => url.startsWith('/callback?'))).toBe(true);

      // An unregistered redirect: a page in plain words, no redirect.
      start.searchParams.set('redirect_uri', 'https://evil.example/callback');
      const refused = await page.goto(start.href);
      expect(refused?.status()).toBe(400);
      expect(new URL(page.url()).origin).toBe(base);
      expect(await page.textContent('main')).toContain('did not register');
      // The way back to the developer's app.
      expect(await page.getAttribute('a.button', 'href')).toBe('https://app.acme.example/home');
      expect(await page.textContent('a.button')).toBe('Back to Acme');
      await inspect(page, 'refused-redirect');
      await context.close();
    },
  );
});
