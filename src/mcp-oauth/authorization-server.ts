import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type Provider from 'oidc-provider';
import type { AccessToken, Client, KoaContext } from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';
import { SecretBox } from '../../libs/common/src/index.js';
import { mcpOAuthClientActor, SYSTEM_ACTOR } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { brandOf } from '../projects/end-user-page.js';
import { AppConfig } from '../config/app-config.js';
import type { McpIdentityProviderEntity } from './identity-provider.entity.js';
import { McpOAuthRepository } from './mcp-oauth.repository.js';
import { MCP_SCOPE, projectMcpPath, projectMcpUrl } from './mcp-oauth.paths.js';
import { OAuthRecordAdapter } from './oauth-adapter.js';
import { errorPage } from './sign-in-pages.js';
import { TOKEN_TTL_DEFAULT_S } from './mcp-token.entity.js';

/** An authorization server's own keys: an Ed25519 signing key (ID tokens) and cookie-signing keys. */
export interface ServerKeys {
  jwks: { keys: Record<string, unknown>[] };
  cookieKeys: string[];
}

export function newServerKeys(): ServerKeys {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  return {
    jwks: { keys: [{ ...jwk, alg: 'EdDSA', use: 'sig', kid: randomBytes(8).toString('hex') }] },
    cookieKeys: [randomBytes(32).toString('base64url')],
  };
}

/** The grant a consent created stands for one owner-scoped MCP token; its id is derived from the grant's. */
export function mcpTokenIdOfGrant(grantId: string): string {
  const hex = createHash('sha256').update(`mcp-grant:${grantId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const ACCESS_TOKEN_TTL_S = 3600;

interface VerifiedToken {
  caller: OAuthCaller;
  grantId: string;
}

function verifiedKey(projectId: string, value: string): string {
  return `${projectId}:${createHash('sha256').update(value).digest('base64url')}`;
}
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * A grant revoked while oidc-provider served a request: by the client at the revocation endpoint (`token`: the
 * kind of token it presented), or by the server when a refresh token or code was used twice (a token family).
 */
interface GrantRevocation {
  grantId: string;
  token?: 'AccessToken' | 'RefreshToken';
}

const REVOKED_TOKEN = { AccessToken: 'access_token', RefreshToken: 'refresh_token' } as const;

/** What the revocation endpoint hands `features.revocation.allowedPolicy`. */
interface PresentedToken {
  kind: string;
  clientId: string;
  grantId?: string;
}

/** The principal of a valid access token: the consent's MCP token. */
export interface OAuthCaller {
  tokenId: string;
  ownerId: string;
  apps: string[] | null;
}

/**
 * The OAuth 2.1 authorization server of each project's MCP address, built on oidc-provider (grants,
 * PKCE, resource indicators, refresh rotation, DCR, client metadata documents and all metadata are
 * the library's; Patchbay supplies storage, the sign-in through the project's identity provider, the
 * consent, and the tie to owner-scoped MCP tokens). One provider object per project, built on first
 * use and kept while its identity-provider settings are unchanged.
 */
@Injectable()
export class AuthorizationServer {
  private readonly providers = new LRUCache<string, { version: number; provider: Provider }>({ max: 200 });
  /**
   * Access tokens verified lately, by the SHA-256 of their value: what API keys get too (a few database reads
   * and oidc-provider's token checks per request otherwise). An entry lives API_KEY_CACHE_TTL_MS at most, and
   * never past the token's or its MCP token's expiry; a revocation on this instance forgets it at once (the MCP
   * token, the access token, its grant), on other instances within API_KEY_CACHE_TTL_MS.
   */
  private readonly verified: LRUCache<string, VerifiedToken>;
  private readonly logger = new Logger('McpAuthorization');
  private readonly metadataFetch: (url: string, options: Record<string, unknown>) => Promise<Response>;

  constructor(
    private readonly repository: McpOAuthRepository,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {
    this.metadataFetch = clientMetadataFetch(config);
    this.verified = new LRUCache<string, VerifiedToken>({
      max: 10_000,
      ttl: config.API_KEY_CACHE_TTL_MS,
      ttlResolution: 0,
    });
  }

  /**
   * Forgets verified access tokens: one (`key`), those of an MCP token (revoked) or of a grant (revoked by
   * oidc-provider), or all of a project (its identity provider deleted).
   */
  forgetVerified(match: { key?: string; tokenId?: string; grantId?: string; projectId?: string }): void {
    if (match.key !== undefined) {
      this.verified.delete(match.key);
    }
    if (match.tokenId === undefined && match.grantId === undefined && match.projectId === undefined) {
      return;
    }
    for (const [key, entry] of this.verified.entries()) {
      if (
        entry.caller.tokenId === match.tokenId ||
        entry.grantId === match.grantId ||
        key.startsWith(`${match.projectId}:`)
      ) {
        this.verified.delete(key);
      }
    }
  }

  /** The project's provider, or null when the project has no identity provider (then no OAuth). */
  async providerFor(projectId: string): Promise<Provider | null> {
    const settings = await this.repository.findIdentityProvider(projectId);
    if (!settings) {
      this.providers.delete(projectId);
      return null;
    }
    const version = settings.updated_at.getTime();
    const cached = this.providers.get(projectId);
    if (cached?.version === version) {
      return cached.provider;
    }
    const provider = this.build(projectId, settings, await oidcProvider());
    this.providers.set(projectId, { version, provider });
    return provider;
  }

  /** The project's server keys (to bind the consent form's CSRF token), or null without an identity provider. */
  async keysFor(projectId: string): Promise<ServerKeys | null> {
    const settings = await this.repository.findIdentityProvider(projectId);
    return settings ? this.secretBox.openJson<ServerKeys>(settings.server_keys) : null;
  }

  /** Hands a request of the project's authorization server (its path after the project's prefix) to oidc-provider. */
  async serve(projectId: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const provider = await this.providerFor(projectId);
    if (!provider) {
      const page = errorPage(404, 'Sign-in is not set up', 'This project has not set up sign-in for MCP clients.');
      await reply.status(page.status).headers(page.headers).send(page.body);
      return;
    }
    const raw = request.raw as typeof request.raw & { originalUrl?: string; body?: unknown };
    const prefix = projectMcpPath(projectId);
    if (request.method === 'GET' && new URL(raw.url ?? '/', 'http://x').pathname === `${prefix}/auth`) {
      raw.url = withDefaultScope(raw.url ?? '/');
    }
    raw.originalUrl = raw.url;
    raw.url = (raw.url ?? '').slice(prefix.length) || '/';
    // Fastify has parsed the body already; oidc-provider then takes it from req.body.
    raw.body = request.body;
    void reply.hijack();
    await (provider.callback() as unknown as (req: unknown, res: unknown) => Promise<void>)(raw, reply.raw);
  }

  /** The caller of a valid access token for this project's MCP address; null for anything else. */
  async verifyAccessToken(projectId: string, value: string): Promise<OAuthCaller | null> {
    const key = verifiedKey(projectId, value);
    const known = this.verified.get(key);
    if (known) {
      return known.caller;
    }
    const provider = await this.providerFor(projectId);
    if (!provider) {
      return null;
    }
    let token: AccessToken | undefined;
    try {
      token = await provider.AccessToken.find(value);
    } catch {
      return null;
    }
    const audience = projectMcpUrl(this.config.publicBaseUrl, projectId);
    const audiences = [token?.aud ?? []].flat();
    if (!token || token.isExpired || audiences.length !== 1 || audiences[0] !== audience) {
      return null;
    }
    const row = await this.repository.findUsableGrantToken(projectId, mcpTokenIdOfGrant(token.grantId));
    if (!row) {
      return null;
    }
    const caller = { tokenId: row.id, ownerId: row.linked_account_owner_id, apps: row.apps };
    const until = Math.min(row.expires_at.getTime(), (token.exp ?? Infinity) * 1000);
    const ttl = Math.min(this.config.API_KEY_CACHE_TTL_MS, until - Date.now());
    if (ttl >= 1) {
      this.verified.set(key, { caller, grantId: token.grantId }, { ttl });
    }
    return caller;
  }

  /**
   * A grant's OAuth tokens are gone: its MCP token (listed by GET /v1/mcp/tokens) is marked revoked, and the
   * change recorded, by the client that revoked it or by the service for a token family revoked on reuse. A
   * token already revoked (DELETE /v1/mcp/tokens/{id}, or a second revocation) changes nothing and is not recorded.
   */
  private async recordRevocation(projectId: string, ctx: KoaContext, revocation: GrantRevocation): Promise<void> {
    const id = mcpTokenIdOfGrant(revocation.grantId);
    // Whatever this instance verified of the grant is refused from now on.
    this.forgetVerified({ grantId: revocation.grantId, tokenId: id });
    if (!(await this.repository.revokeGrantToken(projectId, id))) {
      return;
    }
    const clientId = ctx.oidc.client?.clientId ?? null;
    const byClient = revocation.token !== undefined && clientId !== null;
    // Recorded right after the update (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor: byClient ? mcpOAuthClientActor(clientId) : SYSTEM_ACTOR,
      action: 'mcp_token.revoked',
      resourceId: id,
      after: {
        oauth_client_id: clientId,
        reason: byClient ? 'revoked_by_client' : `${String(ctx.oidc.params?.grant_type)}_reused`,
        revoked_token: revocation.token && REVOKED_TOKEN[revocation.token],
      },
    });
  }

  private build(projectId: string, settings: McpIdentityProviderEntity, oidc: OidcProviderModule): Provider {
    const { errors } = oidc;
    const keys = this.secretBox.openJson<ServerKeys>(settings.server_keys);
    const resource = projectMcpUrl(this.config.publicBaseUrl, projectId);
    const prefix = projectMcpPath(projectId);
    const repository = this.repository;
    const revocations = new WeakMap<KoaContext, GrantRevocation>();
    const provider = new oidc.default(resource, {
      adapter: (model: string) =>
        new OAuthRecordAdapter(
          repository,
          projectId,
          model,
          // A revoked access token or grant is refused at once here, whatever was verified before.
          (revoked) =>
            this.forgetVerified({
              grantId: revoked.grantId,
              key: model === 'AccessToken' && revoked.id ? verifiedKey(projectId, revoked.id) : undefined,
            }),
          // oidc-provider stores a client only when one registers (RFC 7591); registration is anonymous.
          // Recorded right after the client's row is written (a single statement, no transaction to share).
          model === 'Client'
            ? (id, payload) =>
                this.audit.record({
                  projectId,
                  actor: SYSTEM_ACTOR,
                  action: 'mcp_oauth_client.registered',
                  resourceId: id,
                  after: payload,
                })
            : undefined,
        ),
      jwks: keys.jwks,
      cookies: {
        keys: keys.cookieKeys,
        // Names of their own: an identity provider on the same host (oidc-provider's defaults) must not collide.
        names: { session: 'pb_mcp_session', interaction: 'pb_mcp_interaction', resume: 'pb_mcp_resume' },
        long: { signed: true, httpOnly: true, sameSite: 'lax' },
        short: { signed: true, httpOnly: true, sameSite: 'lax' },
      },
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'EdDSA',
      },
      enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
      clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
      responseTypes: ['code'],
      pkce: { required: () => true },
      // `mcp` is the resource's scope; listed here too, as clients register it (DCR validates it against this list).
      scopes: ['openid', 'offline_access', MCP_SCOPE],
      claims: { openid: ['sub'] },
      conformIdTokenClaims: true,
      allowOmittingSingleRegisteredRedirectUri: false,
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: {
          enabled: true,
          // oidc-provider's own rule (a client revokes only its own tokens), noting what is revoked so that
          // the change is recorded once the endpoint has done it (see recordRevocation).
          allowedPolicy: (ctx: KoaContext, client: Client, token: PresentedToken) => {
            if (token.clientId !== client.clientId) {
              if (client.clientAuthMethod === 'none') {
                return false;
              }
              throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
            }
            if (token.grantId && (token.kind === 'AccessToken' || token.kind === 'RefreshToken')) {
              revocations.set(ctx, { grantId: token.grantId, token: token.kind });
            }
            return true;
          },
        },
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        resourceIndicators: {
          enabled: true,
          // RFC 8707 is required: an authorization request must name the resource.
          defaultResource: (_ctx: KoaContext, _client: Client, oneOf?: string[]) => {
            if (oneOf?.length === 1) {
              return oneOf[0];
            }
            throw new errors.InvalidTarget(`the resource parameter (RFC 8707) is required: ${resource}`);
          },
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: KoaContext, indicator: string) => {
            if (indicator !== resource) {
              throw new errors.InvalidTarget(`this authorization server issues tokens for ${resource} only`);
            }
            return {
              scope: MCP_SCOPE,
              audience: resource,
              accessTokenFormat: 'opaque',
              accessTokenTTL: ACCESS_TOKEN_TTL_S,
            };
          },
        },
        clientIdMetadataDocument: {
          enabled: true,
          ack: 'draft-02',
          cacheDuration: { min: 300, max: 86_400 },
        },
      },
      fetch: this.metadataFetch,
      fetchResponseBodyLimits: { 'client_id metadata document': this.config.MCP_CLIENT_METADATA_MAX_BYTES },
      extraClientMetadata: {
        properties: ['redirect_uris'],
        validator: (_ctx: KoaContext, key: string, value: unknown) => {
          if (key === 'redirect_uris') {
            checkRedirectUris(value, errors);
          }
        },
      },
      interactions: {
        url: (_ctx: KoaContext, interaction: { uid: string }) => `${prefix}/interaction/${interaction.uid}`,
      },
      // Every authorization asks for consent (each consent creates its own owner-scoped MCP token): only
      // the grant of the consent just given is loaded, never one remembered from an earlier authorization.
      loadExistingGrant: (ctx: KoaContext & { oidc: { result?: { consent?: { grantId?: string } } } }) => {
        const grantId = ctx.oidc.result?.consent?.grantId;
        return grantId ? provider.Grant.find(grantId) : undefined;
      },
      issueRefreshToken: (_ctx: KoaContext, client: Client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_S,
        AuthorizationCode: 60,
        Grant: TOKEN_TTL_DEFAULT_S,
        IdToken: ACCESS_TOKEN_TTL_S,
        Interaction: 600,
        RefreshToken: TOKEN_TTL_DEFAULT_S,
        // No lasting sign-in at Patchbay: each authorization signs in at the project's identity provider.
        Session: 600,
      },
      findAccount: (_ctx: KoaContext, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
      /** Refreshing a grant whose MCP token was revoked (DELETE /v1/mcp/tokens/{id}) or expired issues nothing. */
      extraTokenClaims: async (_ctx: KoaContext, token: { grantId?: string }) => {
        if (token.grantId && !(await repository.findUsableGrantToken(projectId, mcpTokenIdOfGrant(token.grantId)))) {
          throw new errors.InvalidGrant('the grant was revoked or has expired');
        }
        return {};
      },
      renderError: async (ctx: KoaContext, out: { error?: string; error_description?: string }) => {
        const project = await repository.findProject(projectId);
        const page = errorPage(
          400,
          'Sign-in failed',
          plainOAuthError(out.error, out.error_description),
          project ? brandOf(project) : undefined,
        );
        ctx.type = 'html';
        for (const [name, value] of Object.entries(page.headers)) {
          ctx.set(name, value);
        }
        ctx.body = page.body;
      },
    });
    // A refresh token or code used twice: oidc-provider revokes the whole grant (the token family).
    provider.on('grant.revoked', (ctx: KoaContext, grantId: string) => {
      if (ctx.oidc.route !== 'revocation') {
        revocations.set(ctx, { grantId });
      }
    });
    // After oidc-provider has answered, before the answer is sent: the grant's MCP token is revoked with it.
    provider.use(async (ctx, next) => {
      await next();
      const revocation = revocations.get(ctx);
      if (revocation && (revocation.token === undefined || ctx.status < 400)) {
        await this.recordRevocation(projectId, ctx, revocation);
      }
    });
    provider.proxy = Boolean(this.config.TRUST_PROXY);
    provider.on('server_error', (_ctx: unknown, error: Error) => this.logger.error(error.stack ?? error.message));
    return provider;
  }
}

type OidcProviderModule = typeof import('oidc-provider');
let oidcModule: OidcProviderModule | undefined;

/**
 * oidc-provider, loaded at the first project's sign-in rather than at start: on Node 20 its import prints an
 * "Unsupported runtime" warning (it supports Node 22 officially; its flows pass here), which would otherwise open
 * every start's log, JSON lines included, of a service that may never use it.
 */
async function oidcProvider(): Promise<OidcProviderModule> {
  oidcModule ??= await import('oidc-provider');
  return oidcModule;
}

/**
 * RFC 6749 §3.3: an authorization request without `scope` is processed with the default, the resource's scope
 * (clients that follow the metadata send it; some, like the MCP conformance suite's, do not). Without it
 * oidc-provider grants nothing, and the user would be sent back with access_denied after signing in. Returns
 * the authorization request's URL with the scope in its query.
 */
function withDefaultScope(url: string): string {
  const parsed = new URL(url, 'http://x');
  if (!parsed.searchParams.get('scope')) {
    parsed.searchParams.set('scope', MCP_SCOPE);
  }
  return `${parsed.pathname}${parsed.search}`;
}

/** Exact redirect URIs, https except on a loopback address (http://127.0.0.1:port/… for desktop and CLI clients). */
function checkRedirectUris(value: unknown, errors: OidcProviderModule['errors']): void {
  for (const uri of Array.isArray(value) ? (value as unknown[]) : []) {
    const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
    if (!parsed) {
      throw new errors.InvalidClientMetadata('redirect_uris must be absolute URLs');
    }
    if (parsed.protocol === 'http:' && !LOOPBACK_HOSTS.has(parsed.hostname)) {
      throw new errors.InvalidClientMetadata(
        `redirect_uris must use https (or http on a loopback address): ${uri as string}`,
      );
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new errors.InvalidClientMetadata(`redirect_uris must be https URLs: ${uri as string}`);
    }
  }
}

/**
 * How client metadata documents are fetched: oidc-provider's own request (2.5 s at most, redirects
 * refused, 5 KiB by default, and its dispatcher refusing special-use addresses: private, loopback,
 * link-local…) with the time limit of MCP_CLIENT_METADATA_TIMEOUT_MS. With
 * MCP_CLIENT_METADATA_ALLOW_PRIVATE=true (tests, private deployments) that address check is replaced
 * by a plain dispatcher, which trusts MCP_CLIENT_METADATA_CA_FILE's certificates when set.
 */
function clientMetadataFetch(config: AppConfig) {
  const allowPrivate = config.MCP_CLIENT_METADATA_ALLOW_PRIVATE;
  const ca = config.MCP_CLIENT_METADATA_CA_FILE ? readFileSync(config.MCP_CLIENT_METADATA_CA_FILE, 'utf8') : undefined;
  const privateDispatcher = allowPrivate ? new Agent(ca ? { connect: { ca } } : {}) : undefined;
  return (url: string, options: Record<string, unknown>): Promise<Response> => {
    const signal = AbortSignal.any([
      options.signal as AbortSignal,
      AbortSignal.timeout(config.MCP_CLIENT_METADATA_TIMEOUT_MS),
    ]);
    if (privateDispatcher) {
      // The dispatcher belongs to the undici package, so its own fetch (not Node's bundled one) uses it.
      const { dispatcher: _checked, ...rest } = options;
      return undiciFetch(url, {
        ...rest,
        signal,
        dispatcher: privateDispatcher,
      });
    }
    return fetch(url, { ...options, signal });
  };
}

/** Plain words for the OAuth errors an end user can meet on Patchbay's own pages. */
export function plainOAuthError(error: string | undefined, description: string | undefined): string {
  switch (error ?? '') {
    case 'invalid_redirect_uri':
      return 'The app that sent you here gave an address to return to that it did not register. Nothing was shared.';
    case 'invalid_client':
      return 'The app that sent you here is not known or could not be verified. Nothing was shared.';
    case 'invalid_request':
      return `The app that sent you here made an incomplete or invalid request${description ? ` (${description})` : ''}. Nothing was shared.`;
    case 'access_denied':
      return 'You declined access. Nothing was shared.';
    case 'unauthorized_client':
    case 'unsupported_response_type':
      return 'The sign-in service does not allow this kind of sign-in for this app. Nothing was shared.';
    case 'invalid_scope':
      return 'The sign-in service does not recognise the permissions that were asked for. Nothing was shared.';
    case 'server_error':
      return 'The sign-in service had a problem on its side. Nothing was shared; try again in a moment.';
    case 'temporarily_unavailable':
      return 'The sign-in service is busy or down for maintenance. Nothing was shared; try again later.';
    case 'login_required':
    case 'interaction_required':
      return 'You need to sign in to continue. Nothing was shared.';
    default:
      return `Sign-in could not be completed${description ? ` (${description})` : ''}. Nothing was shared.`;
  }
}
