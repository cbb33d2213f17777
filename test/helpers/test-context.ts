import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppConfigurationEntity } from '../../src/app-configurations/app-configuration.entity.js';
import type { AppEntity } from '../../src/apps/app.entity.js';
import type { FunctionEntity } from '../../src/functions/function.entity.js';
import type { LinkedAccountEntity } from '../../src/linked-accounts/linked-account.entity.js';
import { ProjectsService } from '../../src/projects/projects.service.js';
import { insertAppConfiguration } from '../factories/app-configuration.factory.js';
import { type AppOverrides, insertApp, insertFunction } from '../factories/catalog.factory.js';
import { insertLinkedAccount } from '../factories/linked-account.factory.js';
import { CLI_ACTOR } from '../../src/audit/actor.js';

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
    const created = await this.app.get(ProjectsService).createProject(CLI_ACTOR, name);
    this.defaultApiKey ??= created.api_key;
    return { projectId: created.project_id, apiKey: created.api_key, apiKeyId: created.api_key_id };
  }

  newApp(overrides: AppOverrides = {}): Promise<AppEntity> {
    return insertApp(this.app.get(DataSource), overrides);
  }

  newFunction(appName: string, overrides: Partial<FunctionEntity> = {}): Promise<FunctionEntity> {
    return insertFunction(this.app.get(DataSource), appName, overrides);
  }

  newAppConfiguration(
    projectId: string,
    appName: string,
    overrides: Partial<AppConfigurationEntity> = {},
  ): Promise<AppConfigurationEntity> {
    return insertAppConfiguration(this.app.get(DataSource), projectId, appName, overrides);
  }

  /** `credentials` (default `{api_key: 'test-key'}`) are sealed with the service's own key. */
  newLinkedAccount(
    projectId: string,
    appName: string,
    overrides: Partial<LinkedAccountEntity> = {},
    credentials: Record<string, unknown> = { api_key: 'test-key' },
  ): Promise<LinkedAccountEntity> {
    const sealed = this.app.get(SecretBox).sealJson(credentials);
    return insertLinkedAccount(this.app.get(DataSource), projectId, appName, sealed, overrides);
  }
}
