import { Injectable } from '@nestjs/common';
import type { OAuth2Credentials } from './credentials.js';
import { ExecutionFailure } from './execution.errors.js';
import type { AccountView } from './execution-cache.js';
import { ExecutionRepository } from './execution.repository.js';
import { normaliseTokenResponse, stringOf } from '../oauth2/token-response.js';
import { formEncode, type SerializedRequest } from './rest-request.js';
import { StoredSecrets } from './stored-secrets.js';
import { UpstreamFailure, UpstreamHttp } from './upstream-http.js';

/** Refresh when the access token expires within this many seconds. */
export const REFRESH_MARGIN_SECONDS = 60;

/** The client a token was issued to, and where and how it refreshes. */
export interface OAuth2Client {
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
  authMethod: 'client_secret_basic' | 'client_secret_post';
  /** Dotted path to the tokens when the provider nests them in its answer. */
  responsePath?: string;
}

/** Error codes by which providers say the refresh token itself is no good (GitHub answers 200 with its own). */
const REVOKED_GRANT = new Set(['invalid_grant', 'bad_refresh_token']);

type RefreshOutcome =
  { kind: 'tokens'; credentials: OAuth2Credentials } | { kind: 'revoked' } | { kind: 'failed'; message: string };

export function needsRefresh(credentials: OAuth2Credentials, nowSeconds = Date.now() / 1000): boolean {
  return typeof credentials.expires_at === 'number' && credentials.expires_at - nowSeconds < REFRESH_MARGIN_SECONDS;
}

export class NeedsRelinkFailure extends ExecutionFailure {}

/**
 * Keeps OAuth 2.0 access tokens fresh with single-flight refreshes: concurrent executions for one
 * account in this process share one refresh (a promise per account), and instances sharing the
 * database serialise on the account's row lock and re-read the row once they hold it, so the
 * token endpoint is asked once however many callers and instances want a fresh token.
 */
@Injectable()
export class OAuth2Tokens {
  private readonly inflight = new Map<string, Promise<OAuth2Credentials>>();

  constructor(
    private readonly repository: ExecutionRepository,
    private readonly secrets: StoredSecrets,
    private readonly http: UpstreamHttp,
  ) {}

  /** The account's tokens, refreshed first when the access token is about to expire. */
  current(account: AccountView, client: () => OAuth2Client, relinkMessage: string): Promise<OAuth2Credentials> {
    const credentials = this.secrets.account(account) as unknown as OAuth2Credentials;
    if (!needsRefresh(credentials)) {
      return Promise.resolve(credentials);
    }
    const id = account.row.id;
    let running = this.inflight.get(id);
    if (!running) {
      const started = this.refreshUnderLock(id, client(), relinkMessage).finally(() => {
        if (this.inflight.get(id) === started) {
          this.inflight.delete(id);
        }
      });
      running = started;
      this.inflight.set(id, running);
    }
    return running;
  }

  private async refreshUnderLock(id: string, client: OAuth2Client, relinkMessage: string): Promise<OAuth2Credentials> {
    const result = await this.repository.withLockedAccount<OAuth2Credentials | ExecutionFailure>(id, async (row) => {
      if (!row) {
        return { value: new ExecutionFailure('The linked account was deleted while its token was being refreshed') };
      }
      if (row.needs_relink) {
        return { value: new NeedsRelinkFailure(relinkMessage) };
      }
      const stored = this.secrets.open<OAuth2Credentials>(row.credentials, 'the linked account credentials');
      // Another caller (maybe another instance) refreshed while this one waited for the lock.
      if (!needsRefresh(stored)) {
        return { value: stored };
      }
      if (!stored.refresh_token) {
        const expired = (stored.expires_at ?? 0) <= Date.now() / 1000;
        return {
          value: expired
            ? new NeedsRelinkFailure(
                `The OAuth 2.0 access token has expired and there is no refresh token. ${relinkMessage}`,
              )
            : stored,
        };
      }
      const outcome = await this.requestTokens(client, stored);
      switch (outcome.kind) {
        case 'tokens':
          return { value: outcome.credentials, credentials: this.secrets.seal(outcome.credentials) };
        case 'revoked':
          return {
            value: new NeedsRelinkFailure(
              `The OAuth 2.0 provider refused the refresh token (invalid_grant). ${relinkMessage}`,
            ),
            needsRelink: true,
          };
        case 'failed':
          return { value: new ExecutionFailure(outcome.message) };
      }
    });
    if (result instanceof ExecutionFailure) {
      throw result;
    }
    return result;
  }

  /** The refresh_token grant (RFC 6749 §6), authenticating the client as its scheme says (§2.3.1). */
  private async requestTokens(client: OAuth2Client, stored: OAuth2Credentials): Promise<RefreshOutcome> {
    let url: URL;
    try {
      url = new URL(client.tokenUrl);
    } catch {
      return { kind: 'failed', message: 'The app has no valid OAuth 2.0 token URL to refresh the access token at' };
    }
    const form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: stored.refresh_token ?? '' };
    const headers: Record<string, string> = {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
      'User-Agent': 'patchbay',
    };
    if (client.authMethod === 'client_secret_post') {
      form.client_id = client.clientId;
      form.client_secret = client.clientSecret;
    } else {
      const pair = `${formComponent(client.clientId)}:${formComponent(client.clientSecret)}`;
      headers.Authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
    }
    const request: SerializedRequest = {
      method: 'POST',
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      headers,
      body: formEncode(form),
    };
    let status: number;
    let text: string;
    try {
      const answer = await this.http.exchange(request);
      status = answer.status;
      text = answer.body.toString('utf8');
    } catch (error) {
      const reason = error instanceof UpstreamFailure ? error.message : 'the request failed';
      return { kind: 'failed', message: `Refreshing the OAuth 2.0 access token failed: ${reason}` };
    }
    const answer = normaliseTokenResponse(status, text, client.responsePath);
    const code = stringOf(answer?.body.error);
    if (code && REVOKED_GRANT.has(code)) {
      return { kind: 'revoked' };
    }
    // normaliseTokenResponse answers 200 with the tokens, or the error status with `{error}`.
    const tokens = answer?.status === 200 && !code ? answer.body : undefined;
    const accessToken = stringOf(tokens?.access_token);
    if (tokens && accessToken) {
      const expiresIn = Number(tokens.expires_in);
      return {
        kind: 'tokens',
        credentials: {
          access_token: accessToken,
          // A rotated refresh token replaces the old one; otherwise the old one stays valid.
          refresh_token: stringOf(tokens.refresh_token) ?? stored.refresh_token,
          expires_at:
            Number.isFinite(expiresIn) && expiresIn > 0 ? Math.floor(Date.now() / 1000) + expiresIn : undefined,
          scope: stringOf(tokens.scope) ?? stored.scope,
          token_type: stringOf(tokens.token_type) ?? stored.token_type,
        },
      };
    }
    const described = code ? ` (${code})` : '';
    return {
      kind: 'failed',
      message: `Refreshing the OAuth 2.0 access token failed: the token endpoint answered HTTP ${status}${described}`,
    };
  }
}

function formComponent(text: string): string {
  return encodeURIComponent(text).replace(/%20/g, '+');
}
