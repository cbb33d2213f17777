import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
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

export interface BrowserOptions {
  /** Login at the identity provider (oidc-provider's development login: any password). */
  login?: string;
  /** The decision on Patchbay's consent page. */
  decision?: 'allow' | 'deny';
  /** Called with Patchbay's consent page (its HTML) before deciding. */
  onConsent?: (html: string, status: number) => void;
}

/**
 * The user's browser from an authorization URL to the redirect back to the MCP client: Patchbay's
 * authorization server, the project's identity provider (sign-in and its own consent), Patchbay's
 * consent page. Cookies are kept per origin; returns the address the browser is finally sent to
 * (the client's redirect URI), or the page where it stopped.
 */
export async function playBrowser(
  start: URL,
  patchbay: string,
  idp: OidcServer,
  options: BrowserOptions = {},
): Promise<{ redirect?: URL; stoppedAt?: { url: URL; status: number; html: string } }> {
  const jars = new Map<string, Map<string, string>>();
  const trail: string[] = [];
  const visit = async (target: URL, init: RequestInit = {}) => {
    trail.push(`${init.method ?? 'GET'} ${target.pathname}`);
    const jar = jars.get(target.origin) ?? new Map<string, string>();
    jars.set(target.origin, jar);
    const headers = new Headers(init.headers);
    headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(target, { ...init, headers, redirect: 'manual' });
    trail.push(`  → ${response.status} ${response.headers.get('location') ?? ''}`);
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  let url = start;
  let response = await visit(url);
  for (let step = 0; step < 20; step += 1) {
    const location = response.headers.get('location');
    if (location && response.status >= 300 && response.status < 400) {
      url = new URL(location, url);
      if (url.origin !== new URL(patchbay).origin && url.origin !== idp.issuer) {
        return { redirect: url };
      }
      response = await visit(url);
      continue;
    }
    const html = await response.text();
    if (url.origin === idp.issuer && response.status === 200) {
      const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '', idp.issuer);
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      const form = new URLSearchParams({ prompt: prompt ?? '' });
      if (prompt === 'login') {
        form.set('login', options.login ?? 'alice');
        form.set('password', 'any password');
      }
      url = action;
      response = await visit(action, {
        method: 'POST',
        body: form,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      continue;
    }
    if (url.pathname.includes('/interaction/') && response.status === 200 && html.includes('name="decision"')) {
      options.onConsent?.(html, response.status);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
      response = await visit(url, {
        method: 'POST',
        body: new URLSearchParams({ csrf_token: csrf, decision: options.decision ?? 'allow' }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(patchbay).origin },
      });
      continue;
    }
    return { stoppedAt: { url, status: response.status, html } };
  }
  throw new Error(`the browser did not get back to the client within 20 steps:\n${trail.join('\n')}`);
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
