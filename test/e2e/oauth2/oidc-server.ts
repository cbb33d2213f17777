import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import Provider, { type ClientMetadata } from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';

/** One request to the token endpoint as the authorization server received and answered it. */
export interface TokenRequest {
  authorization?: string;
  /** The form parameters, as parsed by the server. */
  form: Record<string, string>;
  status: number;
  response: Record<string, unknown>;
}

export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

/** How the end user answers the provider's pages. */
export interface Interaction {
  login?: string;
  /** Abort at the consent page instead of allowing (the provider then answers access_denied). */
  deny?: boolean;
}

/**
 * A real, strict OAuth 2.0 authorization server (oidc-provider) on 127.0.0.1: PKCE required, client
 * authentication enforced as each client registered it, refresh tokens issued and rotated. It keeps
 * every token request it received so that tests can assert what went over the wire.
 */
export class OidcServer {
  readonly tokenRequests: TokenRequest[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly provider: Provider,
  ) {}

  /**
   * `accessTokenTtl`: seconds an access token lives (3600 by default); `refreshedAccessTokenTtl`: the same for
   * tokens issued by the refresh grant, when they should differ (a link whose token is about to expire, then a
   * refresh that lasts).
   */
  static async start(
    clients: OidcClient[],
    options: {
      accessTokenTtl?: number;
      refreshedAccessTokenTtl?: number;
      /** Dynamic client registration (RFC 7591) open to anyone, as MCP authorization servers offer it. */
      registration?: boolean;
      /** Resource indicators (RFC 8707): tokens bound to the resource asked for, with these scopes. */
      resourceScopes?: string;
      /** The claims of a signed-in account (besides `sub`, its login), for ID tokens of OpenID Connect sign-ins. */
      accountClaims?: (login: string) => Record<string, unknown>;
      /**
       * OAuth Client ID Metadata Documents: a client_id that is an https URL is the client, described by the
       * document fetched there; `trust` is the certificate those documents are served with (a test's own, on
       * 127.0.0.1, which the provider's fetch would otherwise refuse as a private address).
       */
      clientIdMetadataDocuments?: { trust: string };
    } = {},
  ): Promise<OidcServer> {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const documents = options.clientIdMetadataDocuments
      ? new Agent({ connect: { ca: options.clientIdMetadataDocuments.trust } })
      : undefined;
    const provider = new Provider(issuer, {
      clients: clients.map((client): ClientMetadata => ({
        token_endpoint_auth_method: 'client_secret_basic',
        ...client,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      })),
      pkce: { required: () => true },
      scopes: ['openid', 'offline_access', 'email', 'profile', 'calendar.read', 'calendar.write', 'notes'],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
      // Scope-requested claims go into the ID token too (an OpenID Connect sign-in reads them there).
      conformIdTokenClaims: false,
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: (ctx) =>
          ctx.oidc.params?.grant_type === 'refresh_token' && options.refreshedAccessTokenTtl !== undefined
            ? options.refreshedAccessTokenTtl
            : (options.accessTokenTtl ?? 3600),
        AuthorizationCode: 60,
        Grant: 600,
        Interaction: 600,
        RefreshToken: 86_400,
        Session: 600,
      },
      cookies: { keys: ['oauth2-test-cookie-key'] },
      ...(documents
        ? {
            fetch: (url: URL | string, init: Record<string, unknown>) =>
              undiciFetch(url, { ...init, dispatcher: documents }) as unknown as Promise<Response>,
          }
        : {}),
      features: {
        ...(options.clientIdMetadataDocuments ? { clientIdMetadataDocument: { enabled: true } } : {}),
        ...(options.registration ? { registration: { enabled: true } } : {}),
        ...(options.resourceScopes !== undefined
          ? {
              resourceIndicators: {
                enabled: true,
                useGrantedResource: () => true,
                getResourceServerInfo: (_ctx: unknown, resource: string) => ({
                  scope: options.resourceScopes ?? '',
                  audience: resource,
                  accessTokenFormat: 'opaque' as const,
                }),
              },
            }
          : {}),
      },
      findAccount: (_ctx, id) => ({
        accountId: id,
        claims: () => ({ ...options.accountClaims?.(id), sub: id }),
      }),
    });
    const oidc = new OidcServer(server, provider);
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.path === '/token') {
        const body = (ctx as unknown as { oidc?: { body?: Record<string, string> } }).oidc?.body ?? {};
        oidc.tokenRequests.push({
          authorization: ctx.get('authorization') || undefined,
          form: { ...body },
          status: ctx.status,
          response: (ctx.body ?? {}) as Record<string, unknown>,
        });
      }
    });
    server.on('request', provider.callback());
    server.on('connection', (socket) => {
      oidc.sockets.add(socket);
      socket.on('close', () => oidc.sockets.delete(socket));
    });
    return oidc;
  }

  get issuer(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The scheme settings of an app whose provider is this server. */
  scheme(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      location: 'header',
      name: 'Authorization',
      prefix: 'Bearer',
      client_id: null,
      scope: 'calendar.read offline_access',
      authorize_url: `${this.issuer}/auth`,
      access_token_url: `${this.issuer}/token`,
      refresh_token_url: `${this.issuer}/token`,
      ...extra,
    };
  }

  /**
   * Plays the end user's browser from the authorization URL to the provider's final redirect (to the
   * redirect URI), signing in and consenting on the provider's pages with a cookie jar, and returns
   * that redirect's address.
   */
  async authorize(url: string, interaction: Interaction = {}): Promise<URL> {
    const jar = new Map<string, string>();
    const visit = async (target: URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '));
      const response = await fetch(target, { ...init, headers, redirect: 'manual' });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
      return response;
    };
    let response = await visit(new URL(url));
    for (let step = 0; step < 12; step += 1) {
      const location = response.headers.get('location');
      if (location) {
        const next = new URL(location, this.issuer);
        if (next.origin !== this.issuer) {
          return next;
        }
        response = await visit(next);
        continue;
      }
      const html = await response.text();
      if (response.status !== 200) {
        throw new Error(`the provider answered ${response.status}: ${html.slice(0, 300)}`);
      }
      const action = new URL(/<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '', this.issuer);
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      if (prompt === 'consent' && interaction.deny) {
        response = await visit(new URL(`${action.pathname}/abort`, this.issuer));
        continue;
      }
      const form = new URLSearchParams({ prompt: prompt ?? '' });
      if (prompt === 'login') {
        form.set('login', interaction.login ?? 'alice');
        form.set('password', 'any password');
      }
      response = await visit(action, {
        method: 'POST',
        body: form,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    }
    throw new Error('the provider did not redirect back within 12 steps');
  }

  /** Asks the token endpoint directly for a refresh (to see whether a refresh token is still valid). */
  async refresh(client: OidcClient, refreshToken: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${this.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) {
      socket.destroy();
    }
    this.server.close();
    await once(this.server, 'close');
  }
}
