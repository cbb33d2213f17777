import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { RateLimitsModule } from '../rate-limits/rate-limits.module.js';
import { HeaderApiKeyStrategy } from './header-api-key.strategy.js';
import { KnownKeys } from './known-keys.js';
import { ProjectsController } from './projects.controller.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';

@Module({
  imports: [RateLimitsModule, AuditModule],
  controllers: [ProjectsController],
  providers: [ProjectsRepository, ProjectsService, HeaderApiKeyStrategy, KnownKeys],
  exports: [ProjectsService, HeaderApiKeyStrategy, RateLimitsModule],
})
export class ProjectsModule {}
