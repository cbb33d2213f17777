import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In } from 'typeorm';
import { chunksByBytes } from '../../libs/common/src/index.js';
import { AppEntity } from '../apps/app.entity.js';
import { FunctionEntity } from '../functions/function.entity.js';
import type { FunctionRecord } from './catalog-files.js';
import { returnedRows } from '../database/returned-rows.js';

/** Rows per INSERT statement, at most. */
const CHUNK = 200;
/**
 * Bytes of JSON and text per function INSERT, at most (a single larger row goes alone). Rows of
 * OpenAPI documents with large expanded schemas are big, so 200 of them can make one very large
 * statement: the embedded database's socket server gathers a message by concatenating its whole
 * buffer again on every packet received (quadratic in the message's size), and PGlite's WebAssembly
 * memory grows to hold the statement and never shrinks.
 */
const CHUNK_BYTES = 2 * 1024 * 1024;

/**
 * Function rows from a JSON array of FunctionRecord rows (the `row` texts joined): the text is parsed
 * by the database, so the importing process never holds the rows as objects, nor their statement.
 */
const UPSERT_FUNCTIONS = `
  INSERT INTO functions (name, app_name, description, tags, visibility, active, protocol, protocol_data, parameters,
                         response, content_hash, updated_at)
  SELECT r.name, r.app_name, r.description, r.tags, r.visibility, r.active, r.protocol, r.protocol_data, r.parameters,
         r.response, r.content_hash, now()
    FROM jsonb_to_recordset($1::jsonb) AS r(name text, app_name text, description text, tags text[], visibility text,
         active boolean, protocol text, protocol_data jsonb, parameters jsonb, response jsonb, content_hash text)
  ON CONFLICT (name) DO UPDATE SET app_name = EXCLUDED.app_name, description = EXCLUDED.description,
    tags = EXCLUDED.tags, visibility = EXCLUDED.visibility, active = EXCLUDED.active, protocol = EXCLUDED.protocol,
    protocol_data = EXCLUDED.protocol_data, parameters = EXCLUDED.parameters, response = EXCLUDED.response,
    content_hash = EXCLUDED.content_hash, updated_at = EXCLUDED.updated_at`;

@Injectable()
export class CatalogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The stored apps of these names: their content hash, and the project whose own app each is (null: the catalogue's). */
  async appHashes(names: string[]): Promise<Map<string, { hash: string; projectId: string | null }>> {
    if (names.length === 0) {
      return new Map();
    }
    const rows = await this.dataSource
      .getRepository(AppEntity)
      .find({ select: { name: true, content_hash: true, project_id: true }, where: { name: In(names) } });
    return new Map(rows.map((row) => [row.name, { hash: row.content_hash, projectId: row.project_id }]));
  }

  async functionHashes(appNames: string[]): Promise<Map<string, { app_name: string; content_hash: string }>> {
    if (appNames.length === 0) {
      return new Map();
    }
    const rows = await this.dataSource.getRepository(FunctionEntity).find({
      select: { name: true, app_name: true, content_hash: true },
      where: { app_name: In(appNames) },
    });
    return new Map(rows.map((row) => [row.name, { app_name: row.app_name, content_hash: row.content_hash }]));
  }

  async restFunctionNames(appName: string): Promise<Map<string, string>> {
    const rows = await this.dataSource.getRepository(FunctionEntity).find({
      select: { name: true, protocol: true, protocol_data: true },
      where: { app_name: appName, protocol: 'rest' },
    });
    const names = new Map<string, string>();
    for (const row of rows) {
      const data = row.protocol_data as { method?: string; path?: string };
      if (data.method && data.path) {
        names.set(`${data.method.toUpperCase()} ${data.path}`, row.name);
      }
    }
    return names;
  }

  /** What the catalogue holds of an app besides its secrets, or null. */
  async storedApp(name: string): Promise<AppEntity | null> {
    return this.dataSource.getRepository(AppEntity).findOne({ where: { name } });
  }

  /** `TOOL name` → function name, for the tools of a remote MCP server's app (`protocol: mcp`). */
  async mcpToolNames(appName: string): Promise<Map<string, string>> {
    const rows = await this.dataSource.getRepository(FunctionEntity).find({
      select: { name: true, protocol_data: true },
      where: { app_name: appName, protocol: 'mcp' },
    });
    const names = new Map<string, string>();
    for (const row of rows) {
      const tool = (row.protocol_data as { tool?: unknown }).tool;
      if (typeof tool === 'string') {
        names.set(`TOOL ${tool}`, row.name);
      }
    }
    return names;
  }

  /**
   * Deactivates the app's active functions not in `keep` (a tool its server no longer lists): the row
   * stays, so the execution log keeps naming it. Their content hash changes too, so that the same
   * function coming back is written again, active. Answers the names deactivated.
   */
  async deactivateFunctionsExcept(appName: string, keep: string[]): Promise<string[]> {
    const result: unknown[] = await this.dataSource.query(
      `UPDATE functions SET active = false, content_hash = 'deactivated', updated_at = now()
       WHERE app_name = $1 AND active AND NOT (name = ANY($2::text[])) RETURNING name`,
      [appName, keep],
    );
    return returnedRows(result)
      .map((row) => (row as { name: string }).name)
      .sort();
  }

  /**
   * Brings the planner's statistics of the catalogue up to date after a bulk write. PostgreSQL's
   * autovacuum would, later; the embedded database (PGlite) has none, and without statistics a page
   * of 119k functions was planned as a nested loop over every app: 10 to 47 s instead of 32 ms.
   */
  async refreshStatistics(): Promise<void> {
    await this.dataSource.query('ANALYZE apps, functions');
  }

  /** Whether the database answers a trivial query (after a failed write). */
  async answers(): Promise<boolean> {
    try {
      await this.dataSource.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async countApps(): Promise<number> {
    return this.dataSource.getRepository(AppEntity).count();
  }

  async countFunctions(): Promise<number> {
    return this.dataSource.getRepository(FunctionEntity).count();
  }

  /**
   * Inserts or updates the given rows in one transaction: an import lands whole or not at all. The
   * rows are not read back (`updateEntity(false)`: no RETURNING of the date columns into objects
   * nobody reads again). Functions go as their JSON text, a chunk at a time in one parameter, and come
   * in batches, each written as it comes (a reader thread hands a large document's records over while
   * it makes the next ones), so that they are never all held at once; a batch that fails, or a source
   * that fails between two, rolls back everything. The transaction is opened only when there is a row
   * to write: answers whether there was. `alsoWrite` (the audit record) is written last, in the same transaction.
   */
  async upsertFromCatalog(
    apps: Partial<AppEntity>[],
    functions: AsyncIterable<FunctionRecord[]>,
    alsoWrite?: (manager: EntityManager) => Promise<void>,
  ): Promise<boolean> {
    const batches = functions[Symbol.asyncIterator]();
    try {
      let batch = await batches.next();
      if (batch.done && apps.length === 0) {
        return false;
      }
      await this.dataSource.transaction(async (manager) => {
        for (let i = 0; i < apps.length; i += CHUNK) {
          await manager
            .createQueryBuilder()
            .insert()
            .into(AppEntity)
            .values(apps.slice(i, i + CHUNK))
            .updateEntity(false)
            .orUpdate(
              [
                'display_name',
                'provider',
                'version',
                'description',
                'logo',
                'categories',
                'visibility',
                'active',
                'security_schemes',
                'secrets',
                'content_hash',
                'updated_at',
              ],
              ['name'],
            )
            .execute();
        }
        for (; !batch.done; batch = await batches.next()) {
          for (const chunk of chunksByBytes(batch.value, (fn) => fn.row.length, CHUNK_BYTES, CHUNK)) {
            await manager.query(UPSERT_FUNCTIONS, [`[${chunk.map((fn) => fn.row).join(',')}]`]);
          }
        }
        await alsoWrite?.(manager);
      });
      return true;
    } finally {
      // After a failed write the source is not finished: ending it lets it release what it holds.
      await batches.return?.();
    }
  }
}
