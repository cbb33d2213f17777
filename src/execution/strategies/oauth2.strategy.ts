import { Injectable } from '@nestjs/common';
import { type ResolvedOAuth2Client, resolveOAuth2Client } from '../../oauth2/oauth2-client.js';
import { OAuth2ClientNotConfiguredError } from '../../oauth2/oauth2.errors.js';
import type { OAuth2Settings } from '../../apps/security-scheme.js';
import { ExecutionFailure } from '../execution.errors.js';
import { NeedsRelinkFailure, type OAuth2Client, OAuth2Tokens } from '../oauth2-tokens.js';
import { placeValue } from '../rest-request.js';
import { StoredSecrets } from '../stored-secrets.js';
import {
  type Authorization,
  type ExecutionTarget,
  type SecuritySchemeStrategy,
  withPrefix,
} from './security-scheme.strategy.js';

/**
 * `oauth2`: the access token at the scheme's location with its prefix, refreshed first when it
 * expires within 60 s. An account whose refresh token the provider refused needs re-linking.
 */
@Injectable()
export class OAuth2SchemeStrategy implements SecuritySchemeStrategy {
  constructor(
    private readonly tokens: OAuth2Tokens,
    private readonly secrets: StoredSecrets,
  ) {}

  async authorize(target: ExecutionTarget): Promise<Authorization> {
    const app = target.function.fn.app;
    const settings = app.security_schemes.oauth2;
    if (!settings) {
      throw new ExecutionFailure(`App ${app.name} does not offer the oauth2 scheme`);
    }
    const relink =
      `The linked account of app ${app.name} for owner ${target.account.row.linked_account_owner_id} ` +
      'needs re-linking: link it again through the OAuth 2.0 flow.';
    if (target.account.row.needs_relink) {
      throw new NeedsRelinkFailure(relink);
    }
    const credentials = await this.tokens.current(target.account, () => this.client(target, settings), relink);
    const token = credentials.access_token;
    if (!token) {
      throw new NeedsRelinkFailure(`The linked account has no OAuth 2.0 access token. ${relink}`);
    }
    const value = withPrefix(settings.prefix, token);
    return {
      credentials: {
        access_token: token,
        token_type: credentials.token_type,
        scope: credentials.scope,
        expires_at: credentials.expires_at,
      },
      secrets: [token, credentials.refresh_token ?? ''],
      apply: (request) => placeValue(request, settings.location, settings.name, value),
    };
  }

  /** The project's OAuth 2.0 client, by the same rule as linking (placeholders refused). */
  private client(target: ExecutionTarget, settings: OAuth2Settings): OAuth2Client {
    const app = target.function.fn.app;
    let client: ResolvedOAuth2Client;
    try {
      client = resolveOAuth2Client(
        app.name,
        settings,
        target.configuration.row.security_scheme_overrides?.oauth2,
        (fromOverride) =>
          fromOverride
            ? this.secrets.configuration(target.configuration).oauth2_client_secret
            : this.secrets.app(target.function).oauth2_client_secret,
      );
    } catch (error) {
      if (error instanceof OAuth2ClientNotConfiguredError) {
        throw new ExecutionFailure(
          `The access token must be refreshed but app ${app.name} has no OAuth 2.0 client credentials to do it ` +
            `with. ${error.message}`,
        );
      }
      throw error;
    }
    return {
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      tokenUrl: settings.refresh_token_url || settings.access_token_url,
      authMethod: settings.token_endpoint_auth_method ?? 'client_secret_basic',
      tokenResponsePath: settings.token_response_path || undefined,
      resource: settings.resource || undefined,
    };
  }
}
