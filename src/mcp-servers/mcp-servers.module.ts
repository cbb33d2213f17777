import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { CatalogModule } from '../catalog/catalog.module.js';
import { McpUpstreamModule } from '../execution/mcp-upstream.module.js';
import { McpServerOAuth } from './mcp-server-oauth.js';
import { McpServersController } from './mcp-servers.controller.js';
import { McpServersRepository } from './mcp-servers.repository.js';
import { McpServersService } from './mcp-servers.service.js';
import { McpServersSync } from './mcp-servers.sync.js';
import { ProjectMcpServersService } from './project-mcp-servers.service.js';

/** Remote MCP servers as apps: registration and sync (`patchbay catalog add-mcp`, `catalog sync`, a project's own through the API, the periodic sync and announced changes), and Patchbay's Client ID Metadata Document. */
@Module({
  imports: [CatalogModule, McpUpstreamModule, AuditModule],
  controllers: [McpServersController],
  providers: [McpServersRepository, McpServerOAuth, McpServersService, McpServersSync, ProjectMcpServersService],
  exports: [McpServersService],
})
export class McpServersModule {}
