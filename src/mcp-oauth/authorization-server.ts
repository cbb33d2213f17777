import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type Provider from 'oidc-provider';
import type { AccessToken, KoaContext } from 'oidc-provider';
import { SecretBox } from '../../libs/common/src/index.js';
import { mcpOAuthClientActor, SYSTEM_ACTOR } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { McpOAuthRepository } from './mcp-oauth.repository.js';
import { projectMcpPath, projectMcpUrl } from './mcp-oauth.paths.js';
import {
  buildProvider,
  clientMetadataFetch,
  type GrantRevocation,
  oidcProvider,
  type ProviderHost,
  type ServerKeys,
  withDefaultScope,
} from './provider-configuration.js';
import { errorPage } from './sign-in-pages.js';

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

interface VerifiedToken {
  caller: OAuthCaller;
  grantId: string;
}

function verifiedKey(projectId: string, value: string): string {
  return `${projectId}:${createHash('sha256').update(value).digest('base64url')}`;
}

const REVOKED_TOKEN = { AccessToken: 'access_token', RefreshToken: 'refresh_token' } as const;

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
  /** What the providers' hooks use of this service. */
  private readonly host: ProviderHost;

  constructor(
    private readonly repository: McpOAuthRepository,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {
    this.host = {
      repository,
      secretBox,
      config,
      audit,
      logger: this.logger,
      metadataFetch: clientMetadataFetch(config),
      forgetVerified: (match) => this.forgetVerified(match),
      verifiedKey,
      recordRevocation: (projectId, ctx, revocation) => this.recordRevocation(projectId, ctx, revocation),
      mcpTokenIdOfGrant,
    };
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
    const provider = buildProvider(this.host, projectId, settings, await oidcProvider());
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
}
