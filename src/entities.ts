import { AppConfigurationEntity } from './app-configurations/app-configuration.entity.js';
import { AppEntity } from './apps/app.entity.js';
import { AuditEventEntity } from './audit/audit-event.entity.js';
import { ConnectLinkEntity } from './connect-links/connect-link.entity.js';
import { CacheGenerationEntity } from './execution/cache-generation.entity.js';
import { ExecutionEntity } from './execution/execution.entity.js';
import { FunctionEntity } from './functions/function.entity.js';
import { LinkedAccountEntity } from './linked-accounts/linked-account.entity.js';
import { McpSessionEntity } from './mcp/mcp-session.entity.js';
import { McpTokenEntity } from './mcp-oauth/mcp-token.entity.js';
import { McpServerEntity } from './mcp-servers/mcp-server.entity.js';
import { McpIdentityProviderEntity } from './mcp-oauth/identity-provider.entity.js';
import { McpOAuthRecordEntity } from './mcp-oauth/oauth-record.entity.js';
import { OAuth2StateEntity } from './oauth2/oauth2-state.entity.js';
import { ApiKeyEntity } from './projects/api-key.entity.js';
import { RateLimitEntity } from './rate-limits/rate-limit.entity.js';
import { ProjectEntity } from './projects/project.entity.js';
import { SearchCatalogVersionEntity } from './search/search-catalog-version.entity.js';
import { SearchDocumentEntity } from './search/search-document.entity.js';
import { SearchEmbeddingEntity } from './search/search-embedding.entity.js';
import { SearchStaleEntity } from './search/search-stale.entity.js';

/**
 * Every entity, for the data source the composition roots (ApiModule, CliModule) give DatabaseModule.
 * Listed explicitly: ESM builds cannot rely on TypeORM's file globbing. It lives here, above the
 * features, so that src/database imports none of them.
 */
export const ENTITIES = [
  ProjectEntity,
  ApiKeyEntity,
  RateLimitEntity,
  AppEntity,
  FunctionEntity,
  AppConfigurationEntity,
  LinkedAccountEntity,
  ExecutionEntity,
  CacheGenerationEntity,
  SearchDocumentEntity,
  SearchEmbeddingEntity,
  SearchCatalogVersionEntity,
  SearchStaleEntity,
  OAuth2StateEntity,
  ConnectLinkEntity,
  McpTokenEntity,
  McpSessionEntity,
  McpServerEntity,
  McpIdentityProviderEntity,
  McpOAuthRecordEntity,
  AuditEventEntity,
];
