import { Module } from '@nestjs/common';
import { AppConfigurationsModule } from '../app-configurations/app-configurations.module.js';
import { AppsModule } from '../apps/apps.module.js';
import { LinkedAccountsModule } from '../linked-accounts/linked-accounts.module.js';
import { AuthorizationServer } from './authorization-server.js';
import { OAuth2Controller } from './oauth2.controller.js';
import { OAuth2Repository } from './oauth2.repository.js';
import { OAuth2Service } from './oauth2.service.js';

/** GET /v1/linked-accounts/oauth2 and its callback: linking accounts through OAuth 2.0. */
@Module({
  imports: [AppsModule, AppConfigurationsModule, LinkedAccountsModule],
  controllers: [OAuth2Controller],
  providers: [OAuth2Service, OAuth2Repository, AuthorizationServer],
  exports: [OAuth2Service],
})
export class OAuth2Module {}
