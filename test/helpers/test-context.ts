import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import type { AppEntity } from '../../src/apps/app.entity.js';
import type { FunctionEntity } from '../../src/functions/function.entity.js';
import { ProjectsService } from '../../src/projects/projects.service.js';
import { insertApp, insertFunction } from '../factories/catalog.factory.js';

export interface TestProject {
  projectId: string;
  apiKey: string;
  apiKeyId: string;
}

/** Inserts rows through the service's own providers, so tests start from states the service itself makes. */
export class TestContext {
  /** The key `TestApp.request` sends when none is given: the first project's. */
  defaultApiKey?: string;

  constructor(private readonly app: NestFastifyApplication) {}

  async newProject(name = 'test project'): Promise<TestProject> {
    const created = await this.app.get(ProjectsService).createProject(name);
    this.defaultApiKey ??= created.api_key;
    return { projectId: created.project_id, apiKey: created.api_key, apiKeyId: created.api_key_id };
  }

  newApp(overrides: Partial<AppEntity> = {}): Promise<AppEntity> {
    return insertApp(this.app.get(DataSource), overrides);
  }

  newFunction(appName: string, overrides: Partial<FunctionEntity> = {}): Promise<FunctionEntity> {
    return insertFunction(this.app.get(DataSource), appName, overrides);
  }
}
