import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { playSignIn, type SignInBrowserOptions } from '../../../bench/mcp-oauth-sign-in.js';
import type { TestApp } from '../../helpers/test-app.js';
import { OidcServer } from '../oauth2/oidc-server.js';

export const IDP_CLIENT = { client_id: 'patchbay-sign-in', client_secret: 'idp-secret-7c1e9a' };

/**
 * An MCP client's OAuth state, as the SDK's client flow keeps it (in memory): what it registered,
 * its PKCE verifier, its tokens, and the authorization URL it would open in the user's browser.
 */
export class MemoryOAuthClient implements OAuthClientProvider {
  information?: OAuthClientInformationMixed;
  savedTokens?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;

  constructor(
    readonly redirectUrl: string,
    readonly clientName = 'Test Agent',
    /** Set for a client identified by a Client ID Metadata Document at this https URL. */
    readonly clientMetadataUrl?: string,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation() {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }

  tokens() {
    return this.savedTokens;
  }

  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}

/** The user's browser from an authorization URL back to the MCP client (see playSignIn). */
export function playBrowser(
  start: URL,
  patchbay: string,
  idp: OidcServer,
  options: SignInBrowserOptions = {},
): ReturnType<typeof playSignIn> {
  return playSignIn(start, { patchbay: new URL(patchbay).origin, identityProvider: idp.issuer }, options);
}

/** A project's identity provider: a real OpenID Connect provider on 127.0.0.1 whose accounts have an email and a name. */
export async function startIdentityProvider(app: TestApp, projectId: string): Promise<OidcServer> {
  return OidcServer.start(
    [
      {
        ...IDP_CLIENT,
        redirect_uris: [`${app.url}/v1/mcp/p/${projectId}/sign-in/callback`],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    {
      accountClaims: (login) => ({
        email: `${login}@example.test`,
        email_verified: true,
        name: `${login.charAt(0).toUpperCase()}${login.slice(1)} Example`,
      }),
    },
  );
}
