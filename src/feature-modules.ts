import { AppConfigurationsModule } from './app-configurations/app-configurations.module.js';
import { AppsModule } from './apps/apps.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuditEventsModule } from './audit-events/audit-events.module.js';
import { ConnectLinksModule } from './connect-links/connect-links.module.js';
import { ExecutionModule } from './execution/execution.module.js';
import { FunctionsModule } from './functions/functions.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { McpServersModule } from './mcp-servers/mcp-servers.module.js';
import { LinkedAccountsModule } from './linked-accounts/linked-accounts.module.js';
import { OAuth2Module } from './oauth2/oauth2.module.js';

/** The REST resources of /v1; both the HTTP service and the command line are composed from them. */
export const FEATURE_MODULES = [
  AppsModule,
  FunctionsModule,
  AppConfigurationsModule,
  LinkedAccountsModule,
  OAuth2Module,
  ConnectLinksModule,
  ExecutionModule,
  McpModule,
  McpServersModule,
  AuditModule,
  AuditEventsModule,
];
