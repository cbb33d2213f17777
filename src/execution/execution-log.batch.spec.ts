import { describe, expect, it } from 'vitest';
import { ExecutionLogBatch, type ExecutionRecord, plainArrayLiteral } from './execution-log.batch.js';

const record = (overrides: Partial<ExecutionRecord>): ExecutionRecord => ({
  project_id: '4b1e3a52-8c7d-4f0e-9a1b-2c3d4e5f6a7b',
  app_name: 'GITHUB',
  function_name: 'GITHUB__GET_REPO',
  linked_account_owner_id: 'user-1',
  success: true,
  upstream_status: 200,
  duration_ms: 12,
  error: null,
  started_at_ms: 1_767_000_000_123,
  ...overrides,
});

describe('ExecutionLogBatch', () => {
  it('keeps each distinct text value once and refers to it by its 1-based position', () => {
    const batch = new ExecutionLogBatch();
    batch.add('id-1', record({}));
    batch.add(
      'id-2',
      record({ function_name: 'GITHUB__CREATE_ISSUE', linked_account_owner_id: 'GITHUB', source: 'mcp' }),
    );
    expect(batch.size).toBe(2);
    expect(batch.values).toEqual([
      '4b1e3a52-8c7d-4f0e-9a1b-2c3d4e5f6a7b',
      'GITHUB',
      'GITHUB__GET_REPO',
      'user-1',
      'rest',
      'GITHUB__CREATE_ISSUE',
      'mcp',
    ]);
    expect([batch.projects, batch.apps, batch.functions, batch.owners, batch.sources]).toEqual([
      [1, 1],
      [2, 2],
      [3, 6],
      [4, 2],
      [5, 7],
    ]);
  });

  it('gives back any row as a batch of its own, unchanged', () => {
    const batch = new ExecutionLogBatch();
    const failed = record({
      success: false,
      upstream_status: null,
      error: 'Timeout: "x" did not answer',
      started_at_ms: 5,
    });
    batch.add('id-1', record({}));
    batch.add('id-2', failed);
    const single = batch.row(1);
    expect(single.size).toBe(1);
    expect(single.ids).toEqual(['id-2']);
    expect(single.errors).toEqual([failed.error]);
    expect(single.statuses).toEqual([null]);
    expect(single.startedAtMs).toEqual([5]);
    expect(single.values[single.functions[0] - 1]).toBe('GITHUB__GET_REPO');
  });
});

describe('plainArrayLiteral', () => {
  it('writes numbers, booleans, UUIDs and NULL as a PostgreSQL array literal', () => {
    expect(plainArrayLiteral([1, 200, null])).toBe('{1,200,NULL}');
    expect(plainArrayLiteral([true, false])).toBe('{true,false}');
    expect(plainArrayLiteral([])).toBe('{}');
    expect(plainArrayLiteral(['019a0000-0000-7000-8000-000000000001'])).toBe('{019a0000-0000-7000-8000-000000000001}');
  });
});
