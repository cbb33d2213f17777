import { readFileSync } from 'node:fs';
import type { Logger } from '@nestjs/common';
import type Provider from 'oidc-provider';
import type { Client, KoaContext } from 'oidc-provider';
import { Agent, fetch as undiciFetch } from 'undici';
import type { SecretBox } from '../../libs/common/src/index.js';
import { SYSTEM_ACTOR } from '../audit/actor.js';
import type { AuditService } from '../audit/audit.service.js';
import { brandOf } from '../projects/end-user-page.js';
import type { AppConfig } from '../config/app-config.js';
import type { McpIdentityProviderEntity } from './identity-provider.entity.js';
import type { McpOAuthRepository } from './mcp-oauth.repository.js';
import { MCP_SCOPE, projectMcpPath, projectMcpUrl } from './mcp-oauth.paths.js';
import { OAuthRecordAdapter } from './oauth-adapter.js';
import { errorPage } from './sign-in-pages.js';
import { TOKEN_TTL_DEFAULT_S } from './mcp-token.entity.js';

/**
 * How each project's oidc-provider is configured: storage, keys and cookies, the grants and PKCE it
 * allows, resource indicators, client registration and metadata documents, token lifetimes, and the
 * hooks that tie revocations to owner-scoped MCP tokens. The service that builds, caches and serves
 * these providers is `AuthorizationServer` (authorization-server.ts).
 */

/** An authorization server's own keys: an Ed25519 signing key (ID tokens) and cookie-signing keys. */
export interface ServerKeys {
  jwks: { keys: Record<string, unknown>[] };
  cookieKeys: string[];
}

export const ACCESS_TOKEN_TTL_S = 3600;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * A grant revoked while oidc-provider served a request: by the client at the revocation endpoint (`token`: the
 * kind of token it presented), or by the server when a refresh token or code was used twice (a token family).
 */
export interface GrantRevocation {
  grantId: string;
  token?: 'AccessToken' | 'RefreshToken';
}

/** What the revocation endpoint hands `features.revocation.allowedPolicy`. */
interface PresentedToken {
  kind: string;
  clientId: string;
  grantId?: string;
}

/** What a provider's hooks use of the service that builds it. */
export interface ProviderHost {
  repository: McpOAuthRepository;
  secretBox: SecretBox;
  config: AppConfig;
  audit: AuditService;
  logger: Logger;
  metadataFetch: (url: string, options: Record<string, unknown>) => Promise<Response>;
  forgetVerified(match: { key?: string; grantId?: string }): void;
  /** The cache key of a verified access token. */
  verifiedKey(projectId: string, value: string): string;
  recordRevocation(projectId: string, ctx: KoaContext, revocation: GrantRevocation): Promise<void>;
  mcpTokenIdOfGrant(grantId: string): string;
}

/** A project's oidc-provider, configured from its identity-provider settings and keys. */
export function buildProvider(
  host: ProviderHost,
  projectId: string,
  settings: McpIdentityProviderEntity,
  oidc: OidcProviderModule,
): Provider {
  const { errors } = oidc;
  const keys = host.secretBox.openJson<ServerKeys>(settings.server_keys);
  const resource = projectMcpUrl(host.config.publicBaseUrl, projectId);
  const prefix = projectMcpPath(projectId);
  const repository = host.repository;
  const revocations = new WeakMap<KoaContext, GrantRevocation>();
  const provider = new oidc.default(resource, {
    adapter: (model: string) =>
      new OAuthRecordAdapter(
        repository,
        projectId,
        model,
        // A revoked access token or grant is refused at once here, whatever was verified before.
        (revoked) =>
          host.forgetVerified({
            grantId: revoked.grantId,
            key: model === 'AccessToken' && revoked.id ? host.verifiedKey(projectId, revoked.id) : undefined,
          }),
        // oidc-provider stores a client only when one registers (RFC 7591); registration is anonymous.
        // Recorded right after the client's row is written (a single statement, no transaction to share).
        model === 'Client'
          ? (id, payload) =>
              host.audit.record({
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
    fetch: host.metadataFetch,
    fetchResponseBodyLimits: { 'client_id metadata document': host.config.MCP_CLIENT_METADATA_MAX_BYTES },
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
      if (token.grantId && !(await repository.findUsableGrantToken(projectId, host.mcpTokenIdOfGrant(token.grantId)))) {
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
      await host.recordRevocation(projectId, ctx, revocation);
    }
  });
  provider.proxy = Boolean(host.config.TRUST_PROXY);
  provider.on('server_error', (_ctx: unknown, error: Error) => host.logger.error(error.stack ?? error.message));
  return provider;
}

export type OidcProviderModule = typeof import('oidc-provider');
let oidcModule: OidcProviderModule | undefined;

/**
 * oidc-provider, loaded at the first project's sign-in rather than at start: on Node 20 its import prints an
 * "Unsupported runtime" warning (it supports Node 22 officially; its flows pass here), which would otherwise open
 * every start's log, JSON lines included, of a service that may never use it.
 */
export async function oidcProvider(): Promise<OidcProviderModule> {
  oidcModule ??= await import('oidc-provider');
  return oidcModule;
}

/**
 * RFC 6749 §3.3: an authorization request without `scope` is processed with the default, the resource's scope
 * (clients that follow the metadata send it; some, like the MCP conformance suite's, do not). Without it
 * oidc-provider grants nothing, and the user would be sent back with access_denied after signing in. Returns
 * the authorization request's URL with the scope in its query.
 */
export function withDefaultScope(url: string): string {
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
export function clientMetadataFetch(config: AppConfig) {
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
