import type pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import type { EmbeddedDatabase } from './embedded-database.js';
import { MIGRATIONS } from './migrations/index.js';

/** A client-side bound on every query, so that a mistake (e.g. a deadlock on the embedded database) becomes an error. */
const QUERY_TIMEOUT_MS = 30_000;

/**
 * `entities`: what the data source maps (src/entities.ts, given by the composition roots); a data
 * source that only applies migrations needs none. `client`: the pg client class of the pool's
 * connections (an instrumented one when metrics or traces are on).
 */
export function databaseOptions(
  config: AppConfig,
  embedded?: EmbeddedDatabase,
  entities: DataSourceOptions['entities'] = [],
  client?: typeof pg.Client,
): DataSourceOptions {
  const connection = embedded
    ? { host: embedded.host, port: embedded.port, username: 'postgres', password: 'postgres', database: 'postgres' }
    : { url: config.DATABASE_URL };
  return {
    type: 'postgres',
    ...connection,
    entities,
    migrations: MIGRATIONS,
    migrationsRun: false,
    migrationsTransactionMode: 'each',
    synchronize: false,
    installExtensions: false,
    logging: false,
    extra: {
      // The embedded database runs one statement at a time, and its socket server interleaves protocol
      // messages of different connections: a transaction opened while another connection's query is in
      // flight corrupts that query's results (measured). One connection serialises everything safely.
      max: embedded ? 1 : config.DATABASE_POOL_SIZE,
      query_timeout: QUERY_TIMEOUT_MS,
      connectionTimeoutMillis: 10_000,
      ...(client ? { Client: client } : {}),
    },
  };
}
