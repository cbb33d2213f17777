import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AllExceptionsFilter, InputLimitsGuard, RequestValidationPipe } from '../libs/common/src/index.js';
import { CatalogModule } from './catalog/catalog.module.js';
import { ENTITIES } from './entities.js';
import { FEATURE_MODULES } from './feature-modules.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule, type DatabaseModuleOptions } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';
import { ApiKeyGuard } from './projects/api-key.guard.js';
import { ProjectsModule } from './projects/projects.module.js';
import { SecretsModule } from './secrets/secrets.module.js';

export interface ApiModuleOptions {
  database: DatabaseModuleOptions;
  /** The validated configuration; parsed from the process environment when absent. */
  config?: AppConfig;
}

/** The HTTP service: every feature module behind the global API-key guard, input limits, validation pipe and error filter. */
@Module({})
export class ApiModule {
  static forRoot(options: ApiModuleOptions): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot(options.config),
        DatabaseModule.forRoot(options.database, ENTITIES),
        ProjectsModule,
        HealthModule,
        CatalogModule,
        // Key rotation runs in the CLI; here too, for the embedded database whose one holder is the service.
        SecretsModule,
        ...FEATURE_MODULES,
      ],
      providers: [
        // Providers of their own too, so that the execute route Fastify serves directly runs the same
        // instances (src/execution/execute-route.ts).
        ApiKeyGuard,
        InputLimitsGuard,
        RequestValidationPipe,
        AllExceptionsFilter,
        // Guards run in this order: the input limits only for callers with a valid key.
        { provide: APP_GUARD, useExisting: ApiKeyGuard },
        { provide: APP_GUARD, useExisting: InputLimitsGuard },
        { provide: APP_PIPE, useExisting: RequestValidationPipe },
        { provide: APP_FILTER, useExisting: AllExceptionsFilter },
      ],
    };
  }
}
