import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { hasBearerSecretShape, hashBearerSecret, newBearerSecret } from '../../libs/common/src/index.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import type { Actor } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { ApiKeyInvalidError } from '../projects/projects.errors.js';
import { HeaderApiKeyStrategy } from '../projects/header-api-key.strategy.js';
import { API_KEY_PREFIX } from '../projects/header-api-key.strategy.js';
import { RefusedCredentials } from '../projects/refused-credentials.js';
import { type McpTokenCreate, type McpTokenCreated, type McpTokenPublic } from './mcp.dto.js';
import { McpCredentialsInvalidError, McpTokenNotFoundError } from './mcp.errors.js';
import { McpRepository } from './mcp.repository.js';
import { AuthorizationServer } from '../mcp-oauth/authorization-server.js';
import { MCP_SCOPE, projectOfMcpPath, protectedResourceMetadataUrl } from '../mcp-oauth/mcp-oauth.paths.js';
import { MCP_TOKEN_PREFIX, TOKEN_TTL_DEFAULT_S } from '../mcp-oauth/mcp-token.entity.js';

/** Tokens start with this, so that a bearer value tells which kind of credential it is. */
export const MCP_PATH = '/v1/mcp';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Who is calling /v1/mcp, resolved from the credentials alone. */
export interface McpPrincipal {
  projectId: string;
  /** Set for an owner-scoped token; then the owner cannot be changed by the request. */
  tokenId: string | null;
  /** Set when a project API key authenticated the request. */
  apiKeyId: string | null;
  tokenOwnerId: string | null;
  /** Apps an owner-scoped token is limited to; null for all. */
  tokenApps: string[] | null;
}

@Injectable()
export class McpTokensService {
  private readonly refused = new RefusedCredentials();

  constructor(
    private readonly repository: McpRepository,
    private readonly configurations: AppConfigurationsRepository,
    private readonly apiKeys: HeaderApiKeyStrategy,
    private readonly config: AppConfig,
    private readonly authorizationServer: AuthorizationServer,
    private readonly audit: AuditService,
  ) {}

  async createToken(projectId: string, actor: Actor, input: McpTokenCreate): Promise<McpTokenCreated> {
    const apps = input.apps === undefined || input.apps === null ? null : [...new Set(input.apps)];
    for (const app of apps ?? []) {
      if (!(await this.configurations.findForProject(projectId, app))) {
        throw new AppConfigurationNotFoundError(app);
      }
    }
    const token = newBearerSecret(MCP_TOKEN_PREFIX);
    const ttl = input.expires_in_seconds ?? TOKEN_TTL_DEFAULT_S;
    const row = await this.repository.insertToken({
      id: randomUUID(),
      project_id: projectId,
      linked_account_owner_id: input.linked_account_owner_id,
      apps,
      token_hash: hashBearerSecret(token),
      expires_at: new Date(Date.now() + ttl * 1000),
      client_id: null,
      client_name: null,
    });
    // Recorded right after the insert (a single statement, no transaction to share).
    await this.audit.record({ projectId, actor, action: 'mcp_token.created', resourceId: row.id, after: row });
    return {
      id: row.id,
      token,
      url: `${this.config.publicBaseUrl}${MCP_PATH}`,
      expires_at: row.expires_at.toISOString(),
      linked_account_owner_id: row.linked_account_owner_id,
      apps: row.apps,
    };
  }

  /** The project's usable tokens, those created here and those MCP clients got by signing users in. */
  async listTokens(projectId: string): Promise<McpTokenPublic[]> {
    return (await this.repository.listUsableTokens(projectId, new Date())).map((row) => ({
      id: row.id,
      linked_account_owner_id: row.linked_account_owner_id,
      apps: row.apps,
      client_name: row.client_name,
      client_id: row.client_id,
      expires_at: row.expires_at.toISOString(),
      created_at: row.created_at.toISOString(),
    }));
  }

  async revokeToken(projectId: string, actor: Actor, id: string): Promise<void> {
    if (!(await this.repository.revokeToken(projectId, id))) {
      throw new McpTokenNotFoundError(id);
    }
    // Its OAuth access tokens are refused at once on this instance (elsewhere within API_KEY_CACHE_TTL_MS).
    this.authorizationServer.forgetVerified({ tokenId: id });
    // Recorded right after the update (a single statement, no transaction to share).
    await this.audit.record({ projectId, actor, action: 'mcp_token.revoked', resourceId: id });
  }

  /**
   * The caller of an MCP request: `X-API-KEY`, or `Authorization: Bearer` with an API key or an MCP
   * token, and on a project's own address (/v1/mcp/p/{project}, from `url`) also an OAuth access
   * token of that project's authorization server, whose audience must be that address. Valid tokens are
   * looked up on every request (no cache), so a revocation holds at once on every instance; refused ones are
   * remembered (RefusedCredentials), so that a client retrying one in a loop costs no query.
   */
  async authenticate(
    apiKeyHeader: string | undefined,
    authorization: string | undefined,
    url: string = MCP_PATH,
    /**
     * Called once the credential is known to be valid, before anything else is judged (the input limits): a
     * caller without valid credentials learns nothing about the input, one with them learns what is wrong.
     */
    onValidCredential?: () => void,
  ): Promise<McpPrincipal> {
    const projectId = projectOfMcpPath(url);
    if (projectId === null) {
      const principal = await this.principalOf(apiKeyHeader, authorization, null);
      onValidCredential?.();
      return principal;
    }
    // On a project's address, a refusal says where its OAuth metadata is (RFC 9728 §5.1).
    const metadata = protectedResourceMetadataUrl(this.config.publicBaseUrl, projectId);
    try {
      const principal = await this.principalOf(apiKeyHeader, authorization, projectId);
      onValidCredential?.();
      if (principal.projectId !== projectId) {
        throw new McpCredentialsInvalidError(false);
      }
      return principal;
    } catch (error) {
      if (error instanceof McpCredentialsInvalidError) {
        throw new McpCredentialsInvalidError(
          error.missing,
          error.missing
            ? `Bearer resource_metadata="${metadata}", scope="${MCP_SCOPE}"`
            : `Bearer error="invalid_token", resource_metadata="${metadata}"`,
        );
      }
      throw error;
    }
  }

  private async principalOf(
    apiKeyHeader: string | undefined,
    authorization: string | undefined,
    oauthProject: string | null,
  ): Promise<McpPrincipal> {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    const credential = apiKeyHeader || bearer;
    if (!credential) {
      throw new McpCredentialsInvalidError(true);
    }
    if (!apiKeyHeader && credential.startsWith(MCP_TOKEN_PREFIX)) {
      if (!hasBearerSecretShape(credential, MCP_TOKEN_PREFIX) || this.refused.has(credential)) {
        throw new McpCredentialsInvalidError(false);
      }
      const row = await this.repository.findUsableToken(hashBearerSecret(credential), new Date());
      if (!row) {
        this.refused.add(credential);
        throw new McpCredentialsInvalidError(false);
      }
      return {
        projectId: row.project_id,
        tokenId: row.id,
        apiKeyId: null,
        tokenOwnerId: row.linked_account_owner_id,
        tokenApps: row.apps,
      };
    }
    if (!apiKeyHeader && oauthProject !== null && !credential.startsWith(API_KEY_PREFIX)) {
      // An OAuth access token (oidc-provider's opaque tokens carry no prefix); it acts like an MCP token.
      const caller = UUID.test(oauthProject)
        ? await this.authorizationServer.verifyAccessToken(oauthProject, credential)
        : null;
      if (caller) {
        return {
          projectId: oauthProject,
          tokenId: caller.tokenId,
          apiKeyId: null,
          tokenOwnerId: caller.ownerId,
          tokenApps: caller.apps,
        };
      }
    }
    try {
      const key = await this.apiKeys.validate(credential);
      return {
        projectId: key.projectId,
        apiKeyId: key.apiKeyId,
        tokenId: null,
        tokenOwnerId: null,
        tokenApps: null,
      };
    } catch (error) {
      if (error instanceof ApiKeyInvalidError) {
        throw new McpCredentialsInvalidError(false);
      }
      throw error;
    }
  }
}
