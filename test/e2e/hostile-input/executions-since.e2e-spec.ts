import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionEntity } from '../../../src/execution/execution.entity.js';
import { TestApp } from '../../helpers/test-app.js';

/** `since` accepts what its declared `format: date-time` accepts, years 0001–0099 included. */
describe('GET /v1/executions since', () => {
  let app: TestApp;

  const startedAt = (iso: string, year: number) => {
    const date = new Date(iso);
    date.setUTCFullYear(year);
    return date;
  };

  beforeAll(async () => {
    app = await TestApp.start();
    const { projectId } = await app.ctx.newProject();
    const rows = [
      ['old', startedAt('2000-01-01T00:00:00Z', 1)],
      ['antique', startedAt('2000-06-01T12:00:00Z', 50)],
      ['recent', new Date('2025-06-03T10:00:00Z')],
    ] as const;
    await app.dataSource.getRepository(ExecutionEntity).insert(
      rows.map(([owner, created_at]) => ({
        project_id: projectId,
        id: randomUUID(),
        created_at,
        app_name: 'APP',
        function_name: 'APP__RUN',
        linked_account_owner_id: owner,
        success: true,
        upstream_status: 200,
        duration_ms: 1,
        error: null,
      })),
    );
  });

  afterAll(() => app.close());

  const owners = async (since: string) => {
    const res = await app.get('/v1/executions', { query: { since } });
    expect(res.status, res.text).toBe(200);
    return (res.body as { linked_account_owner_id: string }[]).map((row) => row.linked_account_owner_id).sort();
  };

  it.each([
    ['0001-01-01T00:00:00Z', ['antique', 'old', 'recent']],
    ['0001-01-01T00:00:00+01:00', ['antique', 'old', 'recent']],
    ['0000-01-01T00:00:00Z', ['antique', 'old', 'recent']],
    ['0050-06-01T12:00:00Z', ['antique', 'recent']],
    ['0050-06-01T12:00:00.001Z', ['recent']],
    ['0050-06-01t11:00:00-01:00', ['antique', 'recent']],
    ['0099-12-31T23:59:59Z', ['recent']],
    ['2025-06-03T09:59:59.999999Z', ['recent']],
    ['2025-06-03 11:00:00+01:00', ['recent']],
    ['2016-12-31T23:59:60Z', ['recent']],
    ['2025-06-03T10:00:00.000000Z', ['recent']],
    ['2025-06-03T10:00:00.000001z', []],
    ['9999-12-31T23:59:59-23:59', []],
  ])('%s', async (since, expected) => {
    expect(await owners(since)).toEqual(expected);
  });

  it.each([
    'yesterday',
    '2025-06-03',
    '2025-13-01T00:00:00Z',
    '2025-02-30T00:00:00Z',
    '2025-06-03T24:00:00Z',
    '2025-06-03T09:59:60Z',
  ])('refuses %s naming the field', async (since) => {
    const res = await app.get('/v1/executions', { query: { since } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['query', 'since'],
        msg: 'Input should be a valid RFC 3339 date-time (e.g. 2025-06-03T00:00:00Z)',
        type: 'datetime_parsing',
      },
    ]);
  });
});
