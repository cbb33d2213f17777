import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityTarget } from 'typeorm';
import { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import { AppEntity } from '../apps/app.entity.js';
import { returnedRows } from '../database/returned-rows.js';
import { ConnectLinkEntity } from '../connect-links/connect-link.entity.js';
import { LinkedAccountEntity } from '../linked-accounts/linked-account.entity.js';
import { OAuth2StateEntity } from '../oauth2/oauth2-state.entity.js';
import { McpIdentityProviderEntity } from '../mcp-oauth/identity-provider.entity.js';

/** Every column that holds a value sealed by SecretBox: what a key rotation re-seals. */
const SEALED_COLUMNS: { entity: EntityTarget<object>; column: string }[] = [
  { entity: LinkedAccountEntity, column: 'credentials' },
  { entity: AppConfigurationEntity, column: 'secrets' },
  { entity: AppEntity, column: 'secrets' },
  { entity: ConnectLinkEntity, column: 'webhook_secret' },
  { entity: OAuth2StateEntity, column: 'code_verifier' },
  { entity: McpIdentityProviderEntity, column: 'client_secret' },
  { entity: McpIdentityProviderEntity, column: 'server_keys' },
];

export interface SealedColumn {
  /** `table.column`, for reports. */
  name: string;
  table: string;
  column: string;
  primaryKey: string;
}

export interface SealedRow {
  key: string;
  sealed: string;
}

/** Reads and compare-and-sets the sealed columns, a batch at a time; names come from the entity metadata. */
@Injectable()
export class SealedColumnsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  get columns(): SealedColumn[] {
    return SEALED_COLUMNS.map(({ entity, column }) => {
      const metadata = this.dataSource.getMetadata(entity);
      const table = metadata.tableName;
      return { name: `${table}.${column}`, table, column, primaryKey: metadata.primaryColumns[0].databaseName };
    });
  }

  /** Up to `limit` rows after `after` (primary-key order) whose value does not start with `currentPrefix`. */
  async rowsToReseal(
    target: SealedColumn,
    currentPrefix: string,
    after: string | undefined,
    limit: number,
  ): Promise<SealedRow[]> {
    const { table, column, primaryKey } = target;
    const rows: { key: string; sealed: string }[] = await this.dataSource.query(
      `SELECT "${primaryKey}"::text AS key, "${column}" AS sealed FROM "${table}"
        WHERE "${column}" IS NOT NULL AND left("${column}", $1) <> $2 AND ($3::text IS NULL OR "${primaryKey}"::text > $3)
        ORDER BY "${primaryKey}"::text LIMIT $4`,
      [currentPrefix.length, currentPrefix, after ?? null, limit],
    );
    return rows;
  }

  /**
   * Writes each row's new value in one transaction, only where the column still holds the value that
   * was read (a concurrent update wins and is left alone). Returns how many rows were written.
   */
  async compareAndSet(target: SealedColumn, updates: { key: string; from: string; to: string }[]): Promise<number> {
    const { table, column, primaryKey } = target;
    return this.dataSource.transaction(async (manager) => {
      let written = 0;
      for (const update of updates) {
        const result: unknown[] = await manager.query(
          `UPDATE "${table}" SET "${column}" = $1 WHERE "${primaryKey}"::text = $2 AND "${column}" = $3 RETURNING 1`,
          [update.to, update.key, update.from],
        );
        written += returnedRows(result).length;
      }
      return written;
    });
  }

  /** Rows whose value is not under `currentPrefix`. */
  async countNotUnder(target: SealedColumn, currentPrefix: string): Promise<number> {
    const { table, column } = target;
    const [row] = await this.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}" IS NOT NULL AND left("${column}", $1) <> $2`,
      [currentPrefix.length, currentPrefix],
    );
    return Number(row.n);
  }
}
