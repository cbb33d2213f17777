import { Module } from '@nestjs/common';
import { AppConfigurationsModule } from '../app-configurations/app-configurations.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { ConnectLinksModule } from '../connect-links/connect-links.module.js';
import { ExecutionModule } from '../execution/execution.module.js';
import { FunctionsModule } from '../functions/functions.module.js';
import { LinkedAccountsModule } from '../linked-accounts/linked-accounts.module.js';
import { McpOAuthModule } from '../mcp-oauth/mcp-oauth.module.js';
import { ProjectsModule } from '../projects/projects.module.js';
import { AccountLinking } from './account-linking.js';
import { McpRepository } from './mcp.repository.js';
import { McpTokensController } from './mcp-tokens.controller.js';
import { McpTokensService } from './mcp-tokens.service.js';
import { McpToolsService } from './mcp-tools.service.js';
import { McpTransportController } from './mcp-transport.controller.js';
import { McpTransportService } from './mcp-transport.service.js';

/** /v1/mcp (Patchbay as an MCP server) and /v1/mcp/tokens. */
@Module({
  imports: [
    ProjectsModule,
    FunctionsModule,
    ExecutionModule,
    LinkedAccountsModule,
    ConnectLinksModule,
    AppConfigurationsModule,
    McpOAuthModule,
    AuditModule,
  ],
  controllers: [McpTokensController, McpTransportController],
  providers: [McpRepository, McpTokensService, McpToolsService, McpTransportService, AccountLinking],
})
export class McpModule {}
