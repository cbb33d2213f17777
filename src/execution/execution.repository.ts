import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import { AppConfig } from '../config/app-config.js';
import type { AppEntity } from '../apps/app.entity.js';
import { FunctionEntity } from '../functions/function.entity.js';
import { LinkedAccountEntity } from '../linked-accounts/linked-account.entity.js';
import { CacheGenerationEntity } from './cache-generation.entity.js';
import { ExecutionLogBatch, plainArrayLiteral } from './execution-log.batch.js';
import { ExecutionEntity } from './execution.entity.js';
import { visibleSql } from '../apps/visibility.js';

export type FunctionWithApp = FunctionEntity & { app: AppEntity };

/** What a refresh under the row lock decided: the value to return, and what to write before commit. */
export interface LockedUpdate<T> {
  value: T;
  /** New sealed credentials. */
  credentials?: string;
  needsRelink?: boolean;
}

export interface LockedAccountRow {
  credentials: string;
  needs_relink: boolean;
}

export interface ExecutionFilter {
  functionName?: string;
  appName?: string;
  ownerId?: string;
  success?: boolean;
  since?: Date;
  limit: number;
  offset: number;
}

/** The execution module's queries: the hot-path lookups, the refresh lock and the execution log. */
@Injectable()
export class ExecutionRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** A function that may run: it and its app are public and active. */
  findRunnableFunction(name: string): Promise<FunctionWithApp | null> {
    return this.dataSource
      .getRepository(FunctionEntity)
      .createQueryBuilder('f')
      .innerJoinAndSelect('f.app', 'a')
      .where('f.name = :name', { name })
      .andWhere(`${visibleSql('f')} AND ${visibleSql('a')}`)
      .getOne() as Promise<FunctionWithApp | null>;
  }

  findConfiguration(projectId: string, appName: string): Promise<AppConfigurationEntity | null> {
    return this.dataSource
      .getRepository(AppConfigurationEntity)
      .findOneBy({ project_id: projectId, app_name: appName });
  }

  findLinkedAccount(projectId: string, appName: string, ownerId: string): Promise<LinkedAccountEntity | null> {
    return this.dataSource
      .getRepository(LinkedAccountEntity)
      .findOneBy({ project_id: projectId, app_name: appName, linked_account_owner_id: ownerId });
  }

  async cacheGenerations(): Promise<Map<string, string>> {
    const rows = await this.dataSource.getRepository(CacheGenerationEntity).find();
    return new Map(rows.map((row) => [row.table_name, row.generation]));
  }

  /**
   * Runs `work` holding the account's row lock (SELECT … FOR UPDATE), so that across every instance
   * sharing a PostgreSQL server one caller at a time refreshes its tokens; the others then read the
   * refreshed row. `work` must not query the database.
   *
   * The embedded database is owned by exactly one process, so the caller's in-process single flight
   * is the whole lock there, and no transaction is held across `work`: on the embedded database an
   * open transaction holds up every other connection, and messages of queries that other connections
   * had under way when it began are answered wrongly (pglite-socket queues protocol messages, not
   * whole queries).
   */
  async withLockedAccount<T>(id: string, work: (row: LockedAccountRow | null) => Promise<LockedUpdate<T>>): Promise<T> {
    if (this.config.embedded) {
      const rows: LockedAccountRow[] = await this.dataSource.query(
        'SELECT "credentials", "needs_relink" FROM "linked_accounts" WHERE "id" = $1',
        [id],
      );
      const update = await work(rows[0] ?? null);
      await this.applyLockedUpdate(this.dataSource.manager, id, update);
      return update.value;
    }
    return this.dataSource.transaction(async (manager) => {
      const rows: LockedAccountRow[] = await manager.query(
        'SELECT "credentials", "needs_relink" FROM "linked_accounts" WHERE "id" = $1 FOR UPDATE',
        [id],
      );
      const update = await work(rows[0] ?? null);
      await this.applyLockedUpdate(manager, id, update);
      return update.value;
    });
  }

  /** One statement, so that on the embedded database it is atomic without a transaction. */
  private async applyLockedUpdate(manager: EntityManager, id: string, update: LockedUpdate<unknown>): Promise<void> {
    if (update.credentials === undefined && !update.needsRelink) {
      return;
    }
    await manager.query(
      `UPDATE "linked_accounts" SET "credentials" = COALESCE($2, "credentials"), ` +
        `"needs_relink" = "needs_relink" OR $3, "updated_at" = now() WHERE "id" = $1`,
      [id, update.credentials ?? null, Boolean(update.needsRelink)],
    );
  }

  /**
   * One statement for the whole batch, whatever its size: one array per column, the four text
   * columns as positions in the batch's list of distinct values (cheap to send and to parse).
   */
  async insertExecutions(batch: ExecutionLogBatch): Promise<void> {
    if (batch.size === 0) {
      return;
    }
    await this.dataSource.query(
      `INSERT INTO "executions" ("id", "project_id", "app_name", "function_name", "linked_account_owner_id", ` +
        `"success", "upstream_status", "duration_ms", "error", "created_at", "source", "mcp_token_id") ` +
        `SELECT r.id, v.t[r.p]::uuid, v.t[r.a], v.t[r.f], v.t[r.o], r.s, r.u, r.d, r.e, to_timestamp(r.c / 1000), ` +
        `v.t[r.src], r.tok ` +
        `FROM (SELECT $11::text[] AS t) AS v, ` +
        `unnest($1::uuid[], $2::int[], $3::int[], $4::int[], $5::int[], $6::boolean[], $7::int[], $8::int[], ` +
        `$9::text[], $10::float8[], $12::int[], $13::uuid[]) AS r(id, p, a, f, o, s, u, d, e, c, src, tok)`,
      [
        plainArrayLiteral(batch.ids),
        plainArrayLiteral(batch.projects),
        plainArrayLiteral(batch.apps),
        plainArrayLiteral(batch.functions),
        plainArrayLiteral(batch.owners),
        plainArrayLiteral(batch.successes),
        plainArrayLiteral(batch.statuses),
        plainArrayLiteral(batch.durations),
        batch.errors,
        plainArrayLiteral(batch.startedAtMs),
        batch.values,
        plainArrayLiteral(batch.sources),
        plainArrayLiteral(batch.tokens),
      ],
    );
  }

  /** Newest first. */
  listExecutions(projectId: string, filter: ExecutionFilter): Promise<ExecutionEntity[]> {
    const query = this.dataSource
      .getRepository(ExecutionEntity)
      .createQueryBuilder('e')
      .where('e.project_id = :projectId', { projectId });
    if (filter.functionName !== undefined) {
      query.andWhere('e.function_name = :functionName', { functionName: filter.functionName });
    }
    if (filter.appName !== undefined) {
      query.andWhere('e.app_name = :appName', { appName: filter.appName });
    }
    if (filter.ownerId !== undefined) {
      query.andWhere('e.linked_account_owner_id = :ownerId', { ownerId: filter.ownerId });
    }
    if (filter.success !== undefined) {
      query.andWhere('e.success = :success', { success: filter.success });
    }
    if (filter.since !== undefined) {
      query.andWhere('e.created_at >= :since', { since: filter.since });
    }
    return query
      .orderBy('e.created_at', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .offset(filter.offset)
      .limit(filter.limit)
      .getMany();
  }
}
