import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import * as client from 'openid-client';
import { SecretBox } from '../../libs/common/src/index.js';
import type { Actor } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { isAcceptableEndpoint } from '../oauth2/authorization-server.js';
import { AuthorizationServer, newServerKeys } from './authorization-server.js';
import type { McpIdentityProviderEntity } from './identity-provider.entity.js';
import {
  DEFAULT_OWNER_CLAIM,
  DEFAULT_SCOPES,
  type IdentityProviderPublic,
  type IdentityProviderSet,
} from './identity-providers.dto.js';
import { IdentityProviderInvalidError, IdentityProviderNotFoundError } from './mcp-oauth.errors.js';
import { McpOAuthRepository } from './mcp-oauth.repository.js';
import { projectMcpPath, projectMcpUrl } from './mcp-oauth.paths.js';

/** What a sign-in needs of the project's identity provider: its discovered configuration and settings. */
export interface IdentityProviderClient {
  configuration: client.Configuration;
  scopes: string;
  ownerClaim: string;
  redirectUri: string;
}

const DISCOVERY_TTL_MS = 10 * 60 * 1000;

/** A project's OpenID Connect provider for MCP sign-in: its settings (secret sealed) and its discovered client. */
@Injectable()
export class IdentityProvidersService {
  private readonly discovered = new LRUCache<string, { version: number; client: IdentityProviderClient }>({
    max: 200,
    ttl: DISCOVERY_TTL_MS,
  });

  constructor(
    private readonly repository: McpOAuthRepository,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly authorizationServer: AuthorizationServer,
  ) {}

  async setIdentityProvider(
    projectId: string,
    actor: Actor,
    input: IdentityProviderSet,
  ): Promise<IdentityProviderPublic> {
    const issuer = input.issuer.trim().replace(/\/+$/, '');
    if (!isAcceptableEndpoint(issuer)) {
      throw new IdentityProviderInvalidError('issuer must be an https URL (or http on a loopback address)');
    }
    const scopes = ['openid', ...(input.scopes ?? DEFAULT_SCOPES).split(/\s+/).filter((s) => s && s !== 'openid')];
    const existing = await this.repository.findIdentityProvider(projectId);
    const row = await this.repository.saveIdentityProvider({
      project_id: projectId,
      issuer,
      client_id: input.client_id,
      client_secret: this.secretBox.seal(input.client_secret),
      scopes: [...new Set(scopes)].join(' '),
      owner_claim: input.owner_claim ?? DEFAULT_OWNER_CLAIM,
      // The authorization server keeps its keys across changes of the identity provider.
      server_keys: existing?.server_keys ?? this.secretBox.sealJson(newServerKeys()),
    });
    // Recorded right after the upsert (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor,
      action: existing ? 'mcp_identity_provider.updated' : 'mcp_identity_provider.created',
      resourceId: projectId,
      before: existing,
      after: row,
    });
    return this.toPublic(row);
  }

  async getIdentityProvider(projectId: string): Promise<IdentityProviderPublic> {
    const row = await this.repository.findIdentityProvider(projectId);
    if (!row) {
      throw new IdentityProviderNotFoundError();
    }
    return this.toPublic(row);
  }

  async deleteIdentityProvider(projectId: string, actor: Actor): Promise<void> {
    const existing = await this.repository.findIdentityProvider(projectId);
    if (!(await this.repository.deleteIdentityProvider(projectId))) {
      throw new IdentityProviderNotFoundError();
    }
    this.authorizationServer.forgetVerified({ projectId });
    // Recorded right after the delete (no transaction to share).
    await this.audit.record({
      projectId,
      actor,
      action: 'mcp_identity_provider.deleted',
      resourceId: projectId,
      before: existing,
    });
  }

  redirectUri(projectId: string): string {
    return `${this.config.publicBaseUrl}${projectMcpPath(projectId)}/sign-in/callback`;
  }

  /** The project's identity provider, discovered (cached for 10 minutes and while its settings are unchanged). */
  async clientFor(projectId: string): Promise<IdentityProviderClient | null> {
    const row = await this.repository.findIdentityProvider(projectId);
    if (!row) {
      return null;
    }
    const version = row.updated_at.getTime();
    const cached = this.discovered.get(projectId);
    if (cached?.version === version) {
      return cached.client;
    }
    const loopback = row.issuer.startsWith('http:');
    const configuration = await client.discovery(
      new URL(row.issuer),
      row.client_id,
      undefined,
      client.ClientSecretPost(this.secretBox.open(row.client_secret)),
      loopback ? { execute: [client.allowInsecureRequests] } : undefined,
    );
    const discovered: IdentityProviderClient = {
      configuration,
      scopes: row.scopes,
      ownerClaim: row.owner_claim,
      redirectUri: this.redirectUri(projectId),
    };
    this.discovered.set(projectId, { version, client: discovered });
    return discovered;
  }

  private toPublic(row: McpIdentityProviderEntity): IdentityProviderPublic {
    return {
      issuer: row.issuer,
      client_id: row.client_id,
      client_secret: '****',
      scopes: row.scopes,
      owner_claim: row.owner_claim,
      mcp_url: projectMcpUrl(this.config.publicBaseUrl, row.project_id),
      redirect_uri: this.redirectUri(row.project_id),
    };
  }
}
