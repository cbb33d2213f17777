import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { ApiKeyStrategy } from './api-key.guard.js';
import { ProjectsRepository } from './projects.repository.js';
import { ProjectsService } from './projects.service.js';

@Module({
  imports: [PassportModule],
  providers: [ProjectsRepository, ProjectsService, ApiKeyStrategy],
  exports: [ProjectsService],
})
export class ProjectsModule {}
