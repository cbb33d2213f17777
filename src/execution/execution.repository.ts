import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { boolArray, int4Array, textArray, timestamptzArray, uuidArray } from '../database/binary-arrays.js';
import { newestFirst } from '../database/newest-first.js';
import { CacheGenerationEntity } from './cache-generation.entity.js';
import type { ExecutionLogBatch } from './execution-log.batch.js';
import { ExecutionEntity } from './execution.entity.js';

export interface ExecutionFilter {
  functionName?: string;
  appName?: string;
  ownerId?: string;
  success?: boolean;
  since?: Date;
  limit: number;
  offset: number;
}

/**
 * The execution module's own queries: the cache's change counters and the execution log. The rows the
 * hot path runs with are read through the repositories of the modules that own them.
 */
@Injectable()
export class ExecutionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async cacheGenerations(): Promise<Map<string, string>> {
    const rows = await this.dataSource.getRepository(CacheGenerationEntity).find();
    return new Map(rows.map((row) => [row.table_name, row.generation]));
  }

  /**
   * One statement for the whole batch, whatever its size: one array per column, sent in PostgreSQL's binary
   * format, so that the database copies each value instead of parsing it.
   */
  async insertExecutions(batch: ExecutionLogBatch): Promise<void> {
    if (batch.size === 0) {
      return;
    }
    await this.dataSource.query(
      `INSERT INTO "executions" ("id", "project_id", "app_name", "function_name", "linked_account_owner_id", ` +
        `"success", "upstream_status", "duration_ms", "error", "created_at", "source", "mcp_token_id") ` +
        `SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::boolean[], ` +
        `$7::int[], $8::int[], $9::text[], $10::timestamptz[], $11::text[], $12::uuid[])`,
      [
        uuidArray(batch.ids),
        uuidArray(batch.projects),
        textArray(batch.apps),
        textArray(batch.functions),
        textArray(batch.owners),
        boolArray(batch.successes),
        int4Array(batch.statuses),
        int4Array(batch.durations),
        textArray(batch.errors),
        timestamptzArray(batch.startedAtMs),
        textArray(batch.sources),
        uuidArray(batch.tokens),
      ],
    );
  }

  /** Newest first. */
  listExecutions(projectId: string, filter: ExecutionFilter): Promise<ExecutionEntity[]> {
    return newestFirst(this.dataSource.getRepository(ExecutionEntity), projectId, {
      equal: {
        function_name: filter.functionName,
        app_name: filter.appName,
        linked_account_owner_id: filter.ownerId,
        success: filter.success,
      },
      since: filter.since,
      offset: filter.offset,
      limit: filter.limit,
    });
  }
}
