import { type DynamicModule, Module } from '@nestjs/common';
import { CatalogModule } from './catalog/catalog.module.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule, type DatabaseModuleOptions } from './database/database.module.js';
import { ENTITIES } from './entities.js';
import { McpServersModule } from './mcp-servers/mcp-servers.module.js';
import { ProjectsModule } from './projects/projects.module.js';
import { SecretsModule } from './secrets/secrets.module.js';

/** The command line's application context: the same configuration, database and services, no HTTP. */
@Module({})
export class CliModule {
  static forRoot(database: DatabaseModuleOptions): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(),
        DatabaseModule.forRoot(database, ENTITIES),
        ProjectsModule,
        CatalogModule,
        McpServersModule,
        SecretsModule,
      ],
    };
  }
}
