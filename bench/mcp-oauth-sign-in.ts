/**
 * An OAuth access token for a project's MCP address (`/v1/mcp/p/{project}`), obtained the way an MCP
 * client obtains one: the project's identity provider is a real OpenID Connect provider on 127.0.0.1
 * (oidc-provider, its development login), and the client side is openid-client — discovery of the
 * authorization server, dynamic client registration, authorization code with PKCE S256, `resource`
 * and `state`, and the code exchange. Only the end user's browser is played here: redirects followed,
 * the provider's login and consent forms submitted, Patchbay's consent page allowed.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import * as client from 'openid-client';

const IDP_CLIENT = { client_id: 'patchbay-sign-in', client_secret: 'bench-idp-secret' };
/** Where the MCP client is sent back; nothing listens there, the browser stops at the redirect. */
const CALLBACK = 'http://127.0.0.1:9/callback';

export interface McpOAuthToken {
  accessToken: string;
  /** The project's MCP address, the token's audience. */
  mcpUrl: string;
  /** Stops the identity provider. */
  close(): Promise<void>;
}

/** A project's identity provider, running, and the project's MCP address that signs users in through it. */
export interface ProjectSignIn {
  /** The project's MCP address: the OAuth resource, and the issuer of its authorization server. */
  mcpUrl: string;
  /** The origins the user's browser goes through: Patchbay's and the identity provider's. */
  origins: string[];
  /** Stops the identity provider. */
  close(): Promise<void>;
}

/**
 * Starts an identity provider for the project of `apiKey` and configures it as the project's
 * (PUT /v1/mcp/identity-provider); its users' `sub` (their login) becomes the owner id.
 */
export async function startProjectSignIn(base: string, apiKey: string): Promise<ProjectSignIn> {
  const project = (await api(base, apiKey, 'GET', '/v1/project')) as { id: string };
  const idp = await startIdentityProvider(`${base}/v1/mcp/p/${project.id}/sign-in/callback`);
  try {
    const settings = (await api(base, apiKey, 'PUT', '/v1/mcp/identity-provider', {
      issuer: idp.issuer,
      ...IDP_CLIENT,
      owner_claim: 'sub',
    })) as { mcp_url: string };
    return { mcpUrl: settings.mcp_url, origins: [new URL(base).origin, idp.issuer], close: () => idp.close() };
  } catch (error) {
    await idp.close();
    throw error;
  }
}

/**
 * Configures the project's identity provider, then signs `login` in through it as an MCP client
 * would and returns the access token, bound to the project's MCP address.
 */
export async function mcpOAuthToken(base: string, apiKey: string, login: string): Promise<McpOAuthToken> {
  const signIn = await startProjectSignIn(base, apiKey);
  try {
    // RFC 8414 discovery (the well-known segment before the address's path), as MCP clients do it; http on 127.0.0.1.
    const options = { algorithm: 'oauth2' as const, execute: [client.allowInsecureRequests] };
    const registered = await client.dynamicClientRegistration(
      new URL(signIn.mcpUrl),
      {
        client_name: 'bench:mcp',
        redirect_uris: [CALLBACK],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      client.None(),
      options,
    );
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(registered, {
      redirect_uri: CALLBACK,
      scope: 'mcp',
      resource: signIn.mcpUrl,
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const [patchbay, identityProvider] = signIn.origins;
    const { redirect, stoppedAt } = await playSignIn(url, { patchbay, identityProvider }, { login });
    if (!redirect) {
      const where = stoppedAt
        ? `${stoppedAt.url.pathname} with ${stoppedAt.status}: ${stoppedAt.html.slice(0, 300)}`
        : '';
      throw new Error(`the sign-in stopped at ${where}`);
    }
    const tokens = await client.authorizationCodeGrant(
      registered,
      redirect,
      { pkceCodeVerifier: verifier, expectedState: state },
      { resource: signIn.mcpUrl },
    );
    return { accessToken: tokens.access_token, mcpUrl: signIn.mcpUrl, close: () => signIn.close() };
  } catch (error) {
    await signIn.close();
    throw error;
  }
}

async function api(base: string, apiKey: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  }
  return response.json();
}

/** A real OpenID Connect provider on 127.0.0.1 with one client (Patchbay) and its development login. */
async function startIdentityProvider(redirectUri: string): Promise<{ issuer: string; close(): Promise<void> }> {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        ...IDP_CLIENT,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    pkce: { required: () => true },
    cookies: { keys: ['bench-idp-cookie-key'] },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  server.on('request', provider.callback());
  return {
    issuer,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface SignInBrowserOptions {
  /** Login at the identity provider (oidc-provider's development login: any password); `alice` unless said. */
  login?: string;
  /** The decision on Patchbay's consent page; `allow` unless said. */
  decision?: 'allow' | 'deny';
  /** Called with Patchbay's consent page (its HTML) before deciding. */
  onConsent?: (html: string, status: number) => void;
}

/**
 * The user's browser from an authorization URL to the redirect back to the MCP client: Patchbay's authorization
 * server, the project's identity provider (its login and consent forms submitted), Patchbay's consent page.
 * Cookies are kept per origin; answers the address the browser is finally sent to (the client's redirect URI), or
 * the page where it stopped. The benchmarks and the MCP OAuth tests sign in through it.
 */
export async function playSignIn(
  start: URL,
  origins: { patchbay: string; identityProvider: string },
  options: SignInBrowserOptions = {},
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
  const form = (body: URLSearchParams, extra: Record<string, string> = {}): RequestInit => ({
    method: 'POST',
    body,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...extra },
  });
  let url = start;
  let response = await visit(url);
  for (let step = 0; step < 20; step += 1) {
    const location = response.headers.get('location');
    if (location && response.status >= 300 && response.status < 400) {
      url = new URL(location, url);
      if (url.origin !== origins.patchbay && url.origin !== origins.identityProvider) {
        return { redirect: url };
      }
      response = await visit(url);
      continue;
    }
    const html = await response.text();
    if (url.origin === origins.identityProvider && response.status === 200) {
      // The identity provider's development pages: a login form, then a consent form.
      const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '', origins.identityProvider);
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      const fields = new URLSearchParams({ prompt: prompt ?? '' });
      if (prompt === 'login') {
        fields.set('login', options.login ?? 'alice');
        fields.set('password', 'any password');
      }
      url = action;
      response = await visit(action, form(fields));
      continue;
    }
    if (url.pathname.includes('/interaction/') && response.status === 200 && html.includes('name="decision"')) {
      options.onConsent?.(html, response.status);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
      const decision = new URLSearchParams({ csrf_token: csrf, decision: options.decision ?? 'allow' });
      response = await visit(url, form(decision, { origin: origins.patchbay }));
      continue;
    }
    return { stoppedAt: { url, status: response.status, html } };
  }
  throw new Error(`the browser did not get back to the client within 20 steps:\n${trail.join('\n')}`);
}
