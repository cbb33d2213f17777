import { Injectable } from '@nestjs/common';
import { DomainError, hashBearerSecret, SecretBox } from '../../libs/common/src/index.js';
import type { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import type { AppConfigurationSecrets } from '../app-configurations/app-configurations.service.js';
import type { AppEntity, AppSecrets } from '../apps/app.entity.js';
import type { OAuth2Settings } from '../apps/security-scheme.js';
import { AppConfig } from '../config/app-config.js';
import type { OAuth2Credentials } from '../linked-accounts/credentials.js';
import { SYSTEM_ACTOR } from '../audit/actor.js';
import type { LinkedAccountPublic } from '../linked-accounts/linked-accounts.dto.js';
import { LinkedAccountsService } from '../linked-accounts/linked-accounts.service.js';
import { AuthorizationServer, isAcceptableEndpoint, type OAuth2ClientSettings } from './authorization-server.js';
import { brandOf } from '../projects/end-user-page.js';
import { requestedScope, resolveOAuth2Client } from './oauth2-client.js';
import {
  type CallbackPageContext,
  type CallbackResponse,
  failedResponse,
  linkedResponse,
} from './callback-response.js';
import type { OAuth2StateEntity } from './oauth2-state.entity.js';
import type { OAuth2CallbackQuery, OAuth2LinkStart, OAuth2LinkStartQuery } from './oauth2.dto.js';
import {
  OAuth2CodeMissingError,
  OAuth2ConfigurationChangedError,
  OAuth2InsecureEndpointError,
  OAuth2ProviderError,
  OAuth2SchemeMissingError,
  OAuth2StateExpiredError,
  OAuth2StateMissingError,
  OAuth2StateUnknownError,
} from './oauth2.errors.js';
import { OAuth2Repository } from './oauth2.repository.js';
import { RedirectAllowList } from './redirect-allow-list.js';

/** How long a started flow may take to come back (RFC 6749 §10.5 asks for short-lived codes and states). */
export const STATE_TTL_MS = 10 * 60 * 1000;
/** Expired flows are kept a day longer so that a late callback says "expired" rather than "unknown". */
const EXPIRED_KEPT_MS = 24 * 60 * 60 * 1000;
export const CALLBACK_PATH = '/v1/linked-accounts/oauth2/callback';

/** The scheme's settings as the catalogue stores them, plus the options only linking reads. */

interface ResolvedClient {
  app: AppEntity;
  settings: OAuth2ClientSettings;
}

/**
 * OAuth 2.0 account linking (authorization code flow with PKCE). The start keeps everything about
 * the flow in the database under the hash of an opaque state; the callback consumes that row once,
 * exchanges the code and creates the linked account — or updates the owner's existing one in place.
 */
@Injectable()
export class OAuth2Service {
  constructor(
    private readonly states: OAuth2Repository,
    private readonly accounts: LinkedAccountsService,
    private readonly server: AuthorizationServer,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly redirects: RedirectAllowList,
  ) {}

  async startOAuth2Linking(projectId: string, query: OAuth2LinkStartQuery): Promise<OAuth2LinkStart> {
    const { app, settings } = await this.resolveClient(projectId, query.app_name);
    const afterRedirect = query.after_oauth2_link_redirect_url ?? null;
    if (afterRedirect !== null) {
      this.redirects.check(afterRedirect, 'after_oauth2_link_redirect_url');
    }
    const state = this.server.randomState();
    const pkce = await this.server.pkce();
    await this.states.deleteExpiredBefore(new Date(Date.now() - EXPIRED_KEPT_MS));
    await this.states.insert({
      state_hash: hashBearerSecret(state),
      project_id: projectId,
      app_name: app.name,
      linked_account_owner_id: query.linked_account_owner_id,
      client_id: settings.clientId,
      code_verifier: this.secretBox.seal(pkce.verifier),
      redirect_uri: settings.redirectUri,
      scope: settings.scope || null,
      after_redirect_url: afterRedirect,
      expires_at: new Date(Date.now() + STATE_TTL_MS),
    });
    return { url: this.server.authorizationUrl(settings, state, pkce.challenge) };
  }

  /**
   * Every outcome is an answer: with a redirect URL the browser goes back to the caller's page with
   * the result in its query; otherwise JSON, or a page when a browser asks for HTML. Failures before
   * the state is known cannot redirect (the state names where to go).
   */
  async handleOAuth2Callback(query: OAuth2CallbackQuery, html: boolean): Promise<CallbackResponse> {
    let redirectUrl: string | null = null;
    let flow: OAuth2StateEntity | null = null;
    try {
      if (!query.state) {
        throw new OAuth2StateMissingError();
      }
      flow = await this.states.consume(hashBearerSecret(query.state));
      if (!flow) {
        throw new OAuth2StateUnknownError();
      }
      redirectUrl = flow.after_redirect_url;
      const account = await this.completeLinking(flow, query.state, query);
      return linkedResponse(account, redirectUrl, await this.pageContext(html, redirectUrl, flow));
    } catch (error) {
      if (error instanceof DomainError) {
        return failedResponse(error, redirectUrl, await this.pageContext(html, redirectUrl, flow));
      }
      throw error;
    }
  }

  /** For a browser that stays on the callback: the app's name and the project's branding, when the flow is known. */
  private async pageContext(
    html: boolean,
    redirectUrl: string | null,
    flow: OAuth2StateEntity | null,
  ): Promise<CallbackPageContext | null> {
    if (!html || redirectUrl) {
      return null;
    }
    if (!flow) {
      return { appDisplayName: 'The provider' };
    }
    const { project, appDisplayName } = await this.states.findPageContext(flow.project_id, flow.app_name);
    return { appDisplayName: appDisplayName ?? flow.app_name, brand: project ? brandOf(project) : undefined };
  }

  private async completeLinking(
    flow: OAuth2StateEntity,
    state: string,
    query: OAuth2CallbackQuery,
  ): Promise<LinkedAccountPublic> {
    if (flow.expires_at.getTime() <= Date.now()) {
      throw new OAuth2StateExpiredError();
    }
    if (query.error) {
      throw new OAuth2ProviderError(query.error, query.error_description);
    }
    if (!query.code) {
      throw new OAuth2CodeMissingError();
    }
    let resolved: ResolvedClient;
    try {
      resolved = await this.resolveClient(flow.project_id, flow.app_name);
    } catch (error) {
      if (error instanceof DomainError) {
        throw new OAuth2ConfigurationChangedError(flow.app_name, `changed (${error.message})`);
      }
      throw error;
    }
    // The code was issued to the client of the start; only that client's secret can redeem it.
    if (resolved.settings.clientId !== flow.client_id) {
      throw new OAuth2ConfigurationChangedError(flow.app_name, 'changed its OAuth 2.0 client');
    }
    const settings = { ...resolved.settings, redirectUri: flow.redirect_uri };
    const granted = await this.server.exchangeCode(settings, {
      code: query.code,
      state,
      codeVerifier: this.secretBox.open(flow.code_verifier),
    });
    const credentials: OAuth2Credentials = {
      access_token: granted.access_token,
      // RFC 6749 §5.1: a response without scope granted what was asked.
      scope: granted.scope ?? flow.scope ?? undefined,
      token_type: granted.token_type,
    };
    if (granted.refresh_token) {
      credentials.refresh_token = granted.refresh_token;
    }
    if (typeof granted.expires_in === 'number' && granted.expires_in > 0) {
      credentials.expires_at = Math.floor(Date.now() / 1000) + Math.floor(granted.expires_in);
    }
    // The callback carries no API key: the service links on the end user's behalf.
    return this.accounts.upsertOAuth2Account(
      flow.project_id,
      SYSTEM_ACTOR,
      flow.app_name,
      flow.linked_account_owner_id,
      credentials,
    );
  }

  /**
   * The project's OAuth 2.0 client for an app: the configuration's overrides (client id and secret,
   * redirect URL, scope) over the catalogue's scheme. Errors name what to set.
   */
  private async resolveClient(projectId: string, appName: string): Promise<ResolvedClient> {
    const { app, configuration } = await this.accounts.configuredApp(projectId, appName, 'oauth2');
    const scheme: Partial<OAuth2Settings> | undefined = app.security_schemes.oauth2;
    if (!scheme) {
      throw new OAuth2SchemeMissingError(app.name);
    }
    const client = resolveOAuth2Client(
      app.name,
      scheme,
      configuration.security_scheme_overrides?.oauth2,
      (fromOverride) => (fromOverride ? this.configurationSecrets(configuration) : this.appSecrets(app)),
    );
    const authorizeUrl = scheme.authorize_url ?? '';
    const tokenUrl = scheme.access_token_url ?? '';
    if (!isAcceptableEndpoint(authorizeUrl)) {
      throw new OAuth2InsecureEndpointError(app.name, 'authorize_url');
    }
    if (!isAcceptableEndpoint(tokenUrl)) {
      throw new OAuth2InsecureEndpointError(app.name, 'access_token_url');
    }
    return {
      app,
      settings: {
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        authorizeUrl,
        tokenUrl,
        authMethod: scheme.token_endpoint_auth_method ?? 'client_secret_basic',
        redirectUri: client.redirectUrl ?? scheme.redirect_url ?? `${this.config.publicBaseUrl}${CALLBACK_PATH}`,
        scope: requestedScope(scheme, configuration.security_scheme_overrides?.oauth2),
        authorizeParams: scheme.authorize_params ?? {},
        resource: scheme.resource || undefined,
        tokenResponsePath: scheme.token_response_path || undefined,
      },
    };
  }

  private configurationSecrets(configuration: AppConfigurationEntity): string | undefined {
    return configuration.secrets
      ? this.secretBox.openJson<AppConfigurationSecrets>(configuration.secrets).oauth2_client_secret
      : undefined;
  }

  private appSecrets(app: AppEntity): string | undefined {
    return app.secrets ? this.secretBox.openJson<AppSecrets>(app.secrets).oauth2_client_secret : undefined;
  }
}
