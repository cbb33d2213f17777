import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { hasBearerSecretShape, hashBearerSecret, newBearerSecret } from '../../libs/common/src/index.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import { AppConfig } from '../config/app-config.js';
import { ApiKeyInvalidError } from '../projects/projects.errors.js';
import { HeaderApiKeyStrategy } from '../projects/header-api-key.strategy.js';
import { RefusedCredentials } from '../projects/refused-credentials.js';
import { type McpTokenCreate, type McpTokenCreated, TOKEN_TTL_DEFAULT_S } from './mcp.dto.js';
import { McpCredentialsInvalidError, McpTokenNotFoundError } from './mcp.errors.js';
import { McpRepository } from './mcp.repository.js';

/** Tokens start with this, so that a bearer value tells which kind of credential it is. */
export const MCP_TOKEN_PREFIX = 'pbm_';
export const MCP_PATH = '/v1/mcp';

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
  ) {}

  async createToken(projectId: string, input: McpTokenCreate): Promise<McpTokenCreated> {
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
    });
    return {
      id: row.id,
      token,
      url: `${this.config.publicBaseUrl}${MCP_PATH}`,
      expires_at: row.expires_at.toISOString(),
      linked_account_owner_id: row.linked_account_owner_id,
      apps: row.apps,
    };
  }

  async revokeToken(projectId: string, id: string): Promise<void> {
    if (!(await this.repository.revokeToken(projectId, id))) {
      throw new McpTokenNotFoundError(id);
    }
  }

  /**
   * The caller of an MCP request: `X-API-KEY`, or `Authorization: Bearer` with an API key or an MCP
   * token. Valid tokens are looked up on every request (no cache), so a revocation holds at once on every
   * instance; refused ones are remembered (RefusedCredentials), so that a client retrying one in a loop costs
   * no query.
   */
  async authenticate(apiKeyHeader: string | undefined, authorization: string | undefined): Promise<McpPrincipal> {
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
