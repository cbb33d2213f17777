import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { SecurityScheme } from '../../../src/apps/security-scheme.js';
import type { AppEntity } from '../../../src/apps/app.entity.js';
import type { TestApp } from '../../helpers/test-app.js';

export const CONNECT_LINKS = '/v1/linked-accounts/connect-links';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A catalogue app supporting `scheme` (and no_auth, for scheme changes), configured by the project through the API. */
export async function configuredApp(
  app: TestApp,
  apiKey: string,
  scheme: SecurityScheme,
  overrides: Partial<AppEntity> = {},
): Promise<AppEntity> {
  const row = await app.ctx.newApp({ security_schemes: { [scheme]: {}, no_auth: {} }, ...overrides });
  const res = await app.post('/v1/app-configurations', { app_name: row.name, security_scheme: scheme }, { apiKey });
  expect(res.status, res.text).toBe(200);
  return row;
}

export interface CreatedLink {
  id: string;
  url: string;
  expires_at: string;
  webhook_secret?: string;
}

export async function createLink(app: TestApp, apiKey: string, body: Record<string, unknown>): Promise<CreatedLink> {
  const res = await app.post<CreatedLink>(CONNECT_LINKS, body, { apiKey });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export interface PageResult {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * What a browser does with a link, through real HTTP: follows the token URL, keeps the cookie it
 * is given (one cookie jar per instance), and posts the page's forms like the page would.
 */
export class ConnectBrowser {
  cookie?: string;

  constructor(
    private readonly app: TestApp,
    /** The Origin header of form posts (a browser sends its page's origin). */
    private readonly origin: string = app.url,
  ) {}

  /** The link's path and query, served by this test's service (PUBLIC_BASE_URL is not its address). */
  static local(url: string): string {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  }

  async request(
    method: string,
    path: string,
    init: { form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<PageResult> {
    const headers: Record<string, string> = { accept: 'text/html', ...init.headers };
    if (this.cookie) {
      headers.cookie = this.cookie;
    }
    let body: string | undefined;
    if (init.form) {
      body = new URLSearchParams(init.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers.origin ??= this.origin;
    }
    const response = await fetch(new URL(path, this.app.url), { method, headers, body, redirect: 'manual' });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) {
      const pair = setCookie.split(';')[0];
      this.cookie = pair.endsWith('=') ? undefined : pair;
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  /** Opens the link: 303 to the token-free page, then that page. */
  async open(url: string): Promise<PageResult> {
    const first = await this.request('GET', ConnectBrowser.local(url));
    if (first.status !== 303) {
      return first;
    }
    return this.request('GET', first.headers.get('location') as string);
  }

  /** Posts the page's form (its action and CSRF token taken from the page) with `fields`. */
  async submit(
    page: PageResult,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<PageResult> {
    const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1];
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1];
    expect(action, 'the page has a form').toBeTruthy();
    return this.request('POST', action as string, { form: { csrf_token: csrf as string, ...fields }, headers });
  }
}
