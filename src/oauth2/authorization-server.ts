import { Injectable } from '@nestjs/common';
import * as client from 'openid-client';
import { OAuth2TokenEndpointError, OAuth2TokenRefusedError } from './oauth2.errors.js';
import { normaliseTokenResponse } from './token-response.js';

/** One app's OAuth 2.0 client as resolved for a project: the catalogue's scheme under the project's overrides. */
export interface OAuth2ClientSettings {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  redirectUri: string;
  /** RFC 8707: the resource the tokens are for, sent in the authorization, token and refresh requests. */
  resource?: string;
  /** Space-separated; empty for none. */
  scope: string;
  /** Extra authorization request parameters from the scheme's `authorize_params`. */
  authorizeParams: Record<string, string>;
  /** Dotted path to the tokens inside the token response when the provider nests them. */
  tokenResponsePath?: string;
}

/** What a refresh needs of a client: its token endpoint and how it authenticates there. */
export type TokenEndpointClient = Pick<
  OAuth2ClientSettings,
  'clientId' | 'clientSecret' | 'tokenUrl' | 'authMethod' | 'tokenResponsePath' | 'resource'
>;

/** How a refresh went: new tokens, an OAuth 2.0 error from the endpoint, or no usable answer (status if any). */
export type RefreshResult =
  | { kind: 'tokens'; tokens: GrantedTokens }
  | { kind: 'refused'; status: number; error: string }
  | { kind: 'failed'; status?: number; answered: boolean };

/** What the token endpoint granted (RFC 6749 §5.1). */
export interface GrantedTokens {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
}

/** PKCE S256 (RFC 7636): the verifier stays on the server, the challenge goes to the provider. */
export interface PkcePair {
  verifier: string;
  challenge: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** https, or plain http only to this machine (local development and tests). */
export function isAcceptableEndpoint(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname));
  } catch {
    return false;
  }
}

/**
 * The authorization code flow with PKCE through openid-client, with server metadata taken from the
 * app's scheme instead of discovery. The token endpoint's answer passes through
 * `normaliseTokenResponse` first, so that per-scheme options handle providers' deviations.
 */
@Injectable()
export class AuthorizationServer {
  randomState(): string {
    return client.randomState();
  }

  async pkce(): Promise<PkcePair> {
    const verifier = client.randomPKCECodeVerifier();
    return { verifier, challenge: await client.calculatePKCECodeChallenge(verifier) };
  }

  authorizationUrl(settings: OAuth2ClientSettings, state: string, codeChallenge: string): string {
    const parameters: Record<string, string> = {
      // The flow's own parameters come last so that no scheme option can replace them.
      ...settings.authorizeParams,
      redirect_uri: settings.redirectUri,
      state,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    };
    if (settings.scope) {
      parameters.scope = settings.scope;
    }
    if (settings.resource) {
      parameters.resource = settings.resource;
    }
    return client.buildAuthorizationUrl(this.configuration(settings), parameters).href;
  }

  /** Exchanges the code (RFC 6749 §4.1.3) with the PKCE verifier, authenticating the client as the scheme says. */
  async exchangeCode(
    settings: OAuth2ClientSettings,
    callback: { code: string; state: string; codeVerifier: string },
  ): Promise<GrantedTokens> {
    // Only code and state are handed on: without discovered metadata there is no issuer to check an
    // `iss` parameter against, and the token request must repeat the registered redirect URI exactly.
    const currentUrl = new URL(settings.redirectUri);
    currentUrl.search = new URLSearchParams({ code: callback.code, state: callback.state }).toString();
    const origin = new URL(settings.tokenUrl).origin;
    try {
      const tokens = await client.authorizationCodeGrant(
        this.configuration(settings),
        currentUrl,
        { pkceCodeVerifier: callback.codeVerifier, expectedState: callback.state },
        resourceParameter(settings),
      );
      return grantedTokens(tokens);
    } catch (error) {
      if (error instanceof client.ResponseBodyError) {
        throw new OAuth2TokenRefusedError(error.error, error.error_description);
      }
      if (error instanceof client.WWWAuthenticateChallengeError) {
        const challenge = error.cause[0]?.parameters;
        throw new OAuth2TokenRefusedError(challenge?.error ?? 'invalid_client', challenge?.error_description);
      }
      if (error instanceof client.ClientError && error.code !== 'OAUTH_TIMEOUT') {
        const where = settings.tokenResponsePath ? ` at ${settings.tokenResponsePath}` : '';
        throw new OAuth2TokenEndpointError(
          `The OAuth 2.0 token endpoint at ${origin} gave no usable answer (an access token${where} was expected)`,
        );
      }
      throw new OAuth2TokenEndpointError(
        `The OAuth 2.0 token endpoint at ${origin} did not answer (connection failed or timed out)`,
      );
    }
  }

  /**
   * The refresh_token grant (RFC 6749 §6) through openid-client, the client authenticating as its scheme says.
   * Never throws for what the endpoint answers: the caller decides what a refusal means for the account.
   */
  async refreshTokens(
    settings: TokenEndpointClient,
    refreshToken: string,
    timeoutSeconds: number,
  ): Promise<RefreshResult> {
    const configuration = this.configuration(settings);
    configuration.timeout = timeoutSeconds;
    try {
      const tokens = await client.refreshTokenGrant(configuration, refreshToken, resourceParameter(settings));
      return {
        kind: 'tokens',
        tokens: grantedTokens(tokens),
      };
    } catch (error) {
      if (error instanceof client.ResponseBodyError) {
        return { kind: 'refused', status: error.status, error: error.error };
      }
      if (error instanceof client.WWWAuthenticateChallengeError) {
        return { kind: 'refused', status: error.status, error: error.cause[0]?.parameters.error ?? 'invalid_client' };
      }
      return unusableAnswer(error);
    }
  }

  private configuration(settings: TokenEndpointClient & { authorizeUrl?: string }): client.Configuration {
    const authentication =
      settings.authMethod === 'none'
        ? client.None()
        : settings.authMethod === 'client_secret_post'
          ? client.ClientSecretPost(settings.clientSecret)
          : client.ClientSecretBasic(settings.clientSecret);
    const configuration = new client.Configuration(
      {
        issuer: new URL(settings.authorizeUrl ?? settings.tokenUrl).origin,
        authorization_endpoint: settings.authorizeUrl,
        token_endpoint: settings.tokenUrl,
      },
      settings.clientId,
      {},
      authentication,
    );
    if (new URL(settings.tokenUrl).protocol === 'http:') {
      // Reached only for loopback addresses: the service refuses other plain-http endpoints at start.
      client.allowInsecureRequests(configuration);
    }
    configuration[client.customFetch] = (url, options) => normalisingFetch(url, options, settings.tokenResponsePath);
    return configuration;
  }
}

function resourceParameter(settings: Pick<TokenEndpointClient, 'resource'>): Record<string, string> | undefined {
  return settings.resource ? { resource: settings.resource } : undefined;
}

/**
 * What an openid-client error says of the answer it was about (kept as a Response in its causes, body unread):
 * its status, and its OAuth 2.0 error code when it has one that openid-client did not read (a 5xx with `{error}`).
 */
async function unusableAnswer(error: unknown): Promise<RefreshResult> {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause.cause instanceof Response) {
      const response = cause.cause;
      const body = (await response.json().catch(() => undefined)) as { error?: unknown } | undefined;
      return typeof body?.error === 'string'
        ? { kind: 'refused', status: response.status, error: body.error }
        : { kind: 'failed', status: response.status, answered: true };
    }
  }
  // As at linking: a ClientError other than a timeout is about an answer; anything else is a failed connection.
  return { kind: 'failed', answered: error instanceof client.ClientError && error.code !== 'OAUTH_TIMEOUT' };
}

async function normalisingFetch(
  url: string,
  options: client.CustomFetchOptions,
  responsePath: string | undefined,
): Promise<Response> {
  const response = await fetch(url, options);
  const text = await response.text();
  const normalised = normaliseTokenResponse(response.status, text, responsePath);
  if (!normalised) {
    const empty = response.status === 204 || response.status === 205 || response.status === 304;
    return new Response(empty ? null : text, { status: response.status, headers: response.headers });
  }
  return new Response(JSON.stringify(normalised.body), {
    status: normalised.status,
    headers: { 'content-type': 'application/json' },
  });
}

/** The fields Patchbay keeps of a token endpoint's answer, for both grants. */
function grantedTokens(tokens: client.TokenEndpointResponse): GrantedTokens {
  return {
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    refresh_token: tokens.refresh_token,
    expires_in: tokens.expires_in,
    scope: tokens.scope,
  };
}
