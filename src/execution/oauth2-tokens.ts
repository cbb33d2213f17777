import { Injectable } from '@nestjs/common';
import type { OAuth2Credentials } from '../linked-accounts/credentials.js';
import { LinkedAccountsRepository } from '../linked-accounts/linked-accounts.repository.js';
import { ExecutionFailure } from './execution.errors.js';
import type { AccountView } from './execution-cache.js';
import { AuthorizationServer, type TokenEndpointClient } from '../oauth2/authorization-server.js';
import { AppConfig } from '../config/app-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { Metrics } from '../observability/metrics.js';
import { StoredSecrets } from './stored-secrets.js';

/** Refresh when the access token expires within this many seconds. */
export const REFRESH_MARGIN_SECONDS = 60;

/** The client a token was issued to, and where and how it refreshes. */
export type OAuth2Client = TokenEndpointClient;

/** Error codes by which providers say the refresh token itself is no good (GitHub answers 200 with its own). */
const REVOKED_GRANT = new Set(['invalid_grant', 'bad_refresh_token']);

type RefreshOutcome =
  { kind: 'tokens'; credentials: OAuth2Credentials } | { kind: 'revoked' } | { kind: 'failed'; message: string };

export function needsRefresh(
  credentials: Pick<OAuth2Credentials, 'expires_at'>,
  nowSeconds = Date.now() / 1000,
): boolean {
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
  private readonly inflight = new Map<string, Promise<Partial<OAuth2Credentials>>>();

  constructor(
    private readonly accounts: LinkedAccountsRepository,
    private readonly secrets: StoredSecrets,
    private readonly server: AuthorizationServer,
    private readonly config: AppConfig,
    private readonly changes: ChangeNotifications,
    private readonly metrics: Metrics,
  ) {}

  /** The account's tokens, refreshed first when the access token is about to expire. */
  current(
    account: AccountView,
    client: () => OAuth2Client,
    relinkMessage: string,
  ): Promise<Partial<OAuth2Credentials>> {
    const credentials = this.secrets.account(account, 'oauth2');
    if (!needsRefresh(credentials)) {
      return Promise.resolve(credentials);
    }
    const id = account.row.id;
    let running = this.inflight.get(id);
    if (!running) {
      const started = this.refreshUnderLock(id, account.row.project_id, client(), relinkMessage).finally(() => {
        if (this.inflight.get(id) === started) {
          this.inflight.delete(id);
        }
      });
      running = started;
      this.inflight.set(id, running);
    }
    return running;
  }

  private async refreshUnderLock(
    id: string,
    projectId: string,
    client: OAuth2Client,
    relinkMessage: string,
  ): Promise<OAuth2Credentials> {
    const { value: result, written } = await this.accounts.withLockedAccount<OAuth2Credentials | ExecutionFailure>(
      id,
      async (row) => {
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
        this.metrics.tokenRefresh(outcome.kind === 'tokens');
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
      },
    );
    if (written) {
      // Committed: the cached account (here and on other instances) still holds the old tokens or flag.
      await this.changes.publish('linked_accounts', projectId);
    }
    if (result instanceof ExecutionFailure) {
      throw result;
    }
    return result;
  }

  /** The refresh_token grant (RFC 6749 §6) through openid-client, as linking exchanges its code. */
  private async requestTokens(client: OAuth2Client, stored: OAuth2Credentials): Promise<RefreshOutcome> {
    if (!URL.canParse(client.tokenUrl)) {
      return { kind: 'failed', message: 'The app has no valid OAuth 2.0 token URL to refresh the access token at' };
    }
    const timeoutSeconds = Math.ceil(this.config.EXECUTION_TIMEOUT_MS / 1000);
    const result = await this.server.refreshTokens(client, stored.refresh_token ?? '', timeoutSeconds);
    switch (result.kind) {
      case 'tokens': {
        const { tokens } = result;
        const expiresIn = tokens.expires_in;
        return {
          kind: 'tokens',
          credentials: {
            access_token: tokens.access_token,
            // A rotated refresh token replaces the old one; otherwise the old one stays valid.
            refresh_token: tokens.refresh_token ?? stored.refresh_token,
            expires_at:
              expiresIn !== undefined && expiresIn > 0 ? Math.floor(Date.now() / 1000) + expiresIn : undefined,
            scope: tokens.scope ?? stored.scope,
            token_type: tokens.token_type || stored.token_type,
          },
        };
      }
      case 'refused':
        return REVOKED_GRANT.has(result.error)
          ? { kind: 'revoked' }
          : {
              kind: 'failed',
              message: `Refreshing the OAuth 2.0 access token failed: the token endpoint answered HTTP ${result.status} (${result.error})`,
            };
      case 'failed':
        return {
          kind: 'failed',
          message:
            result.status !== undefined
              ? `Refreshing the OAuth 2.0 access token failed: the token endpoint answered HTTP ${result.status}`
              : result.answered
                ? 'Refreshing the OAuth 2.0 access token failed: the token endpoint gave no usable answer'
                : 'Refreshing the OAuth 2.0 access token failed: the token endpoint did not answer (connection failed or timed out)',
        };
    }
  }
}
