import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionLogBatch, type ExecutionRecord } from '../../src/execution/execution-log.batch.js';
import { ExecutionLogWriter } from '../../src/execution/execution-log.writer.js';
import { ExecutionRepository } from '../../src/execution/execution.repository.js';
import { TestApp } from '../helpers/test-app.js';

interface StoredRow {
  id: string;
  project_id: string;
  app_name: string;
  function_name: string;
  linked_account_owner_id: string;
  success: boolean;
  upstream_status: number | null;
  duration_ms: number;
  error: string | null;
  created_at: Date;
  source: string;
  mcp_token_id: string | null;
}

/**
 * The execution-log insert: a batch travels as one array per column in PostgreSQL's binary format
 * (src/database/binary-arrays.ts). What must hold is that every value comes back exactly as recorded (texts of
 * any content, times to the microsecond on either side of PostgreSQL's epoch, UUIDs in either case), and that a
 * batch the database refuses writes none of its rows.
 */
describe('execution-log insert (medium: real database)', () => {
  let app: TestApp;
  let repository: ExecutionRepository;
  let projectId: string;

  beforeAll(async () => {
    app = await TestApp.start();
    repository = app.app.get(ExecutionRepository);
    projectId = (await app.ctx.newProject()).projectId;
  });

  afterAll(() => app.close());

  const record = (overrides: Partial<ExecutionRecord>): ExecutionRecord => ({
    project_id: projectId,
    app_name: 'MEDIUM_APP',
    function_name: 'MEDIUM_APP__RUN',
    linked_account_owner_id: 'owner',
    success: true,
    upstream_status: 200,
    duration_ms: 12,
    error: null,
    started_at_ms: Date.UTC(2026, 10, 26, 12, 0, 0, 123),
    ...overrides,
  });

  const rows = (ids: string[]): Promise<StoredRow[]> =>
    app.dataSource.query(
      `SELECT "id", "project_id", "app_name", "function_name", "linked_account_owner_id", "success", "upstream_status",
              "duration_ms", "error", "created_at", "source", "mcp_token_id"
         FROM "executions" WHERE "id" = ANY($1::uuid[]) ORDER BY "id"`,
      [ids],
    );

  it('writes every column back exactly, whatever the texts hold', async () => {
    const awkward = [
      'plain',
      'with, comma',
      '{"braces": [1, 2]}',
      'quote " and backslash \\ and \\"',
      'NULL',
      '',
      'ünïcödé — 日本語 🚀',
      'new\nline\ttab',
    ];
    const token = randomUUID();
    const batch = new ExecutionLogBatch();
    const recorded = new Map<string, ExecutionRecord>();
    awkward.forEach((text, n) => {
      const id = randomUUID();
      const row = record({
        linked_account_owner_id: text,
        error: n % 2 === 0 ? text : null,
        success: n % 2 === 1,
        upstream_status: n % 3 === 0 ? null : 200 + n,
        duration_ms: n * 7,
        started_at_ms: Date.UTC(2026, 10, 26, 12, 0, n, 500),
        source: n % 2 === 0 ? 'mcp' : 'rest',
        mcp_token_id: n % 2 === 0 ? token : null,
      });
      batch.add(id, row);
      recorded.set(id, row);
    });
    await repository.insertExecutions(batch);

    const stored = await rows([...recorded.keys()]);
    expect(stored).toHaveLength(awkward.length);
    for (const row of stored) {
      const expected = recorded.get(row.id) as ExecutionRecord;
      expect(row).toEqual({
        id: row.id,
        project_id: projectId,
        app_name: 'MEDIUM_APP',
        function_name: 'MEDIUM_APP__RUN',
        linked_account_owner_id: expected.linked_account_owner_id,
        success: expected.success,
        upstream_status: expected.upstream_status,
        duration_ms: expected.duration_ms,
        error: expected.error,
        created_at: new Date(expected.started_at_ms),
        source: expected.source,
        mcp_token_id: expected.mcp_token_id,
      });
    }
  });

  it('writes start times to the microsecond, before and after 2000, and UUIDs of either case', async () => {
    const times = [
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2000, 0, 1),
      Date.UTC(2026, 10, 29, 13, 0, 0, 123) + 0.456,
      Date.UTC(2100, 0, 1, 0, 0, 0, 1),
    ];
    const upper = randomUUID().toUpperCase();
    const batch = new ExecutionLogBatch();
    const ids = times.map((started, n) => {
      const id = n === 0 ? upper : randomUUID();
      batch.add(id, record({ started_at_ms: started, linked_account_owner_id: 'times' }));
      return id.toLowerCase();
    });
    await repository.insertExecutions(batch);
    const stored: { id: string; micros: string }[] = await app.dataSource.query(
      `SELECT "id", (extract(epoch FROM "created_at") * 1000000)::bigint::text AS "micros"
         FROM "executions" WHERE "id" = ANY($1::uuid[])`,
      [ids],
    );
    const micros = new Map(stored.map((row) => [row.id, row.micros]));
    expect(ids.map((id) => micros.get(id))).toEqual(times.map((ms) => String(Math.round(ms * 1000))));
  });

  it('a refused batch writes none of its rows', async () => {
    const existing = randomUUID();
    const first = new ExecutionLogBatch();
    first.add(existing, record({}));
    await repository.insertExecutions(first);

    const fresh = randomUUID();
    const clash = new ExecutionLogBatch();
    clash.add(fresh, record({ linked_account_owner_id: 'fresh' }));
    clash.add(existing, record({ linked_account_owner_id: 'clash' }));
    await expect(repository.insertExecutions(clash)).rejects.toThrow();
    expect(await rows([fresh])).toEqual([]);
    expect((await rows([existing]))[0].linked_account_owner_id).toBe('owner');
  });

  it('the writer keeps the rows of a refused batch that the database accepts one by one', async () => {
    const writer = app.app.get(ExecutionLogWriter);
    const owner = `writer-${randomUUID()}`;
    for (let n = 0; n < 5; n += 1) {
      writer.record(record({ linked_account_owner_id: owner, duration_ms: n }));
    }
    // One row the insert refuses (a project id that is not a UUID): its batch fails as a whole.
    writer.record(record({ linked_account_owner_id: owner, project_id: 'not-a-uuid', duration_ms: 99 }));
    await writer.flush();
    const written: { duration_ms: number }[] = await app.dataSource.query(
      `SELECT "duration_ms" FROM "executions" WHERE "linked_account_owner_id" = $1 ORDER BY "duration_ms"`,
      [owner],
    );
    expect(written.map((row) => row.duration_ms)).toEqual([0, 1, 2, 3, 4]);
  });
});
