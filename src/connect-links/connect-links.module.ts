import { Module } from '@nestjs/common';
import { AppConfigurationsModule } from '../app-configurations/app-configurations.module.js';
import { AppsModule } from '../apps/apps.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { LinkedAccountsModule } from '../linked-accounts/linked-accounts.module.js';
import { OAuth2Module } from '../oauth2/oauth2.module.js';
import { ConnectLinkWebhooks } from './connect-link-webhooks.js';
import { ConnectLinksController } from './connect-links.controller.js';
import { ConnectLinksRepository } from './connect-links.repository.js';
import { ConnectLinksService } from './connect-links.service.js';
import { ConnectPageController } from './connect-page.controller.js';
import { ConnectPageService } from './connect-page.service.js';

/**
 * /v1/linked-accounts/connect-links and the end user's /connect pages. Exports ConnectLinksService
 * so that other modules (the MCP server) can hand a link to a user: `create(projectId, {appName,
 * ownerId, afterLinkRedirectUrl?, expiresInSeconds?})` → `{id, url, expiresAt}`.
 */
@Module({
  imports: [AppsModule, AppConfigurationsModule, LinkedAccountsModule, OAuth2Module, AuditModule],
  controllers: [ConnectLinksController, ConnectPageController],
  providers: [ConnectLinksService, ConnectLinksRepository, ConnectPageService, ConnectLinkWebhooks],
  exports: [ConnectLinksService],
})
export class ConnectLinksModule {}
