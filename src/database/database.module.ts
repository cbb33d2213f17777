import {
  type DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { instrumentedPgClient } from '../observability/instrumented-pg-client.js';
import { Metrics } from '../observability/metrics.js';
import { ObservabilityModule } from '../observability/observability.module.js';
import { Tracing } from '../observability/tracing.js';
import { applyMigrations } from './apply-migrations.js';
import { ChangeNotifications } from './change-notifications.js';
import { databaseOptions } from './database-options.js';
import { EmbeddedDatabase } from './embedded-database.js';

export interface DatabaseModuleOptions {
  /** Who opens the embedded data directory (shown to a second process that tries to). */
  holder: string;
  /** Start the embedded database from this dump, in memory, instead of DATA_DIR (tests). */
  embeddedTemplate?: Blob;
  /** Apply pending migrations at start. */
  runMigrations: boolean;
}

export const EMBEDDED_DATABASE = Symbol('EMBEDDED_DATABASE');

/** Closes the embedded database after TypeORM's pool, whatever order Nest runs shutdown hooks in. */
class EmbeddedDatabaseLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(EMBEDDED_DATABASE) private readonly embedded: EmbeddedDatabase | null,
    private readonly moduleRef: ModuleRef,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.embedded) {
      return;
    }
    const dataSource = this.moduleRef.get(DataSource, { strict: false });
    if (dataSource.isInitialized) {
      await dataSource.destroy();
    }
    await this.embedded.close();
  }
}

@Module({})
class EmbeddedDatabaseModule {
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    return {
      module: EmbeddedDatabaseModule,
      providers: [
        {
          provide: EMBEDDED_DATABASE,
          inject: [AppConfig],
          useFactory: async (config: AppConfig): Promise<EmbeddedDatabase | null> => {
            if (!config.embedded) {
              return null;
            }
            const db = await EmbeddedDatabase.open({
              dataDir: options.embeddedTemplate ? 'memory://' : config.DATA_DIR,
              loadDataDir: options.embeddedTemplate,
              maxConnections: config.DATABASE_POOL_SIZE + 5,
              holder: options.holder,
            });
            new Logger('Database').log(
              options.embeddedTemplate ? 'Embedded database in memory' : `Embedded database in ${config.DATA_DIR}`,
            );
            return db;
          },
        },
        EmbeddedDatabaseLifecycle,
      ],
      exports: [EMBEDDED_DATABASE],
    };
  }
}

/** The pool's connections (total, idle) and the requests waiting for one, read when metrics are scraped. */
@Injectable()
class DatabasePoolGauges implements OnModuleInit {
  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    const pool = (
      this.dataSource.driver as unknown as { master?: { totalCount: number; idleCount: number; waitingCount: number } }
    ).master;
    if (!pool) {
      return;
    }
    this.metrics.gauge('patchbay_database_pool_connections', 'Connections the pool holds', () => pool.totalCount);
    this.metrics.gauge(
      'patchbay_database_pool_idle_connections',
      'Connections of the pool not in use',
      () => pool.idleCount,
    );
    this.metrics.gauge(
      'patchbay_database_pool_waiting_requests',
      'Queries waiting for a connection',
      () => pool.waitingCount,
    );
  }
}

/** TypeORM on PostgreSQL: the server at DATABASE_URL, or the embedded one served on a loopback port. */
@Module({})
export class DatabaseModule {
  /** `entities`: every entity the features define (src/entities.ts); passed in so that this layer imports no feature. */
  static forRoot(options: DatabaseModuleOptions, entities: DataSourceOptions['entities']): DynamicModule {
    const embedded = EmbeddedDatabaseModule.forRoot(options);
    return {
      module: DatabaseModule,
      global: true,
      imports: [
        ObservabilityModule,
        embedded,
        TypeOrmModule.forRootAsync({
          imports: [embedded],
          inject: [AppConfig, EMBEDDED_DATABASE, Metrics, Tracing],
          useFactory: (config: AppConfig, db: EmbeddedDatabase | null, metrics: Metrics, tracing: Tracing) =>
            databaseOptions(
              config,
              db ?? undefined,
              entities,
              metrics.enabled || tracing.enabled ? instrumentedPgClient(metrics, tracing) : undefined,
            ),
          // Migrations are applied here (not by TypeORM's migrationsRun), under a lock on a PostgreSQL
          // server, before anything else can use the database.
          dataSourceFactory: async (typeOrmOptions) => {
            const dataSource = await new DataSource(typeOrmOptions as DataSourceOptions).initialize();
            if (options.runMigrations) {
              // databaseOptions gives a URL only for a PostgreSQL server (the embedded one is a host and port).
              const serverUrl = dataSource.options.type === 'postgres' ? dataSource.options.url : undefined;
              try {
                await applyMigrations(dataSource, serverUrl);
              } catch (error) {
                await dataSource.destroy();
                throw error;
              }
            }
            return dataSource;
          },
        }),
      ],
      providers: [ChangeNotifications, DatabasePoolGauges],
      exports: [TypeOrmModule, ChangeNotifications],
    };
  }
}
