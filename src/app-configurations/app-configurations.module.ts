import { Module } from '@nestjs/common';
import { AppsModule } from '../apps/apps.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { FunctionsModule } from '../functions/functions.module.js';
import { AppConfigurationsController } from './app-configurations.controller.js';
import { AppConfigurationsRepository } from './app-configurations.repository.js';
import { AppConfigurationsService } from './app-configurations.service.js';

@Module({
  imports: [AppsModule, FunctionsModule, AuditModule],
  controllers: [AppConfigurationsController],
  providers: [AppConfigurationsRepository, AppConfigurationsService],
  exports: [AppConfigurationsRepository],
})
export class AppConfigurationsModule {}
