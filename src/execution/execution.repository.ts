import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newestFirst } from '../database/newest-first.js';
import { CacheGenerationEntity } from './cache-generation.entity.js';
import { ExecutionLogBatch, plainArrayLiteral } from './execution-log.batch.js';
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
