import { describe, expect, it } from 'vitest';
import { ExecutionLogBatch, type ExecutionRecord } from './execution-log.batch.js';

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
  it('holds each column in the order rows were added, REST and no token when not said', () => {
    const batch = new ExecutionLogBatch();
    batch.add('id-1', record({}));
    batch.add('id-2', record({ function_name: 'GITHUB__CREATE_ISSUE', source: 'mcp', mcp_token_id: 'token-1' }));
    expect(batch.size).toBe(2);
    expect(batch.ids).toEqual(['id-1', 'id-2']);
    expect(batch.functions).toEqual(['GITHUB__GET_REPO', 'GITHUB__CREATE_ISSUE']);
    expect(batch.sources).toEqual(['rest', 'mcp']);
    expect(batch.tokens).toEqual([null, 'token-1']);
  });

  it('gives back any row as a batch of its own, unchanged', () => {
    const batch = new ExecutionLogBatch();
    const failed = record({
      success: false,
      upstream_status: null,
      error: 'Timeout: "x" did not answer',
      started_at_ms: 5,
      source: 'mcp',
    });
    batch.add('id-1', record({}));
    batch.add('id-2', failed);
    const single = batch.row(1);
    const again = new ExecutionLogBatch();
    again.add('id-2', failed);
    expect(single).toEqual(again);
  });
});
