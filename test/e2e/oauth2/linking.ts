import { expect } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import type { AppEntity } from '../../../src/apps/app.entity.js';
import type { OAuth2Credentials } from '../../../src/linked-accounts/credentials.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import type { TestApp } from '../../helpers/test-app.js';

export const CALLBACK_PATH = '/v1/linked-accounts/oauth2/callback';

export interface CallbackResult {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface OAuth2AppOptions {
  /** The catalogue's oauth2 scheme settings. */
  scheme: Record<string, unknown>;
  /** The app's own client secret (sealed in apps.secrets like the catalogue import does). */
  appClientSecret?: string;
  /** The configuration's security_scheme_overrides.oauth2, set through the API. */
  override?: { client_id: string; client_secret: string; redirect_url?: string; scope?: string };
}

/** A catalogue app with an oauth2 scheme and the project's configuration of it (through the API). */
export async function newOAuth2App(app: TestApp, apiKey: string, options: OAuth2AppOptions): Promise<AppEntity> {
  const secrets = options.appClientSecret
    ? app.app.get(SecretBox).sealJson({ oauth2_client_secret: options.appClientSecret })
    : null;
  const row = await app.ctx.newApp({ security_schemes: { oauth2: options.scheme }, secrets });
  const created = await app.post(
    '/v1/app-configurations',
    {
      app_name: row.name,
      security_scheme: 'oauth2',
      ...(options.override ? { security_scheme_overrides: { oauth2: options.override } } : {}),
    },
    { apiKey },
  );
  expect(created.status, created.text).toBe(200);
  return row;
}

/** GET /v1/linked-accounts/oauth2; returns the authorization URL after checking the answer. */
export async function startLinking(
  app: TestApp,
  apiKey: string,
  query: { app_name: string; linked_account_owner_id: string; after_oauth2_link_redirect_url?: string },
): Promise<string> {
  const res = await app.get<{ url: string }>('/v1/linked-accounts/oauth2', { apiKey, query });
  expect(res.status, res.text).toBe(200);
  return res.body.url;
}

/**
 * What the browser does when the provider sends it back: a GET of the callback with the provider's
 * query (taken from the provider's redirect, whatever host it names), redirects not followed.
 */
export async function callback(
  app: TestApp,
  params: URLSearchParams | Record<string, string>,
  headers: Record<string, string> = {},
): Promise<CallbackResult> {
  const search = new URLSearchParams(params);
  const response = await fetch(`${app.url}${CALLBACK_PATH}?${search.toString()}`, { headers, redirect: 'manual' });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, text, body: json };
}

export function stateOf(url: string): string {
  const state = new URL(url).searchParams.get('state');
  expect(state).toBeTruthy();
  return state as string;
}

export async function storedAccount(app: TestApp, id: string) {
  const row = await app.dataSource.getRepository(LinkedAccountEntity).findOneByOrFail({ id });
  return { row, credentials: app.app.get(SecretBox).openJson<OAuth2Credentials>(row.credentials) };
}

export async function countAccounts(app: TestApp, appName: string): Promise<number> {
  return app.dataSource.getRepository(LinkedAccountEntity).countBy({ app_name: appName });
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);
