import { Module } from '@nestjs/common';
import { AppConfigurationsModule } from '../app-configurations/app-configurations.module.js';
import { AppsModule } from '../apps/apps.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { LinkedAccountsController } from './linked-accounts.controller.js';
import { LinkedAccountsRepository } from './linked-accounts.repository.js';
import { LinkedAccountsService } from './linked-accounts.service.js';

@Module({
  imports: [AppsModule, AppConfigurationsModule, AuditModule],
  controllers: [LinkedAccountsController],
  providers: [LinkedAccountsRepository, LinkedAccountsService],
  exports: [LinkedAccountsRepository, LinkedAccountsService],
})
export class LinkedAccountsModule {}
