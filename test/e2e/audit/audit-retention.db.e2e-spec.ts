import { randomUUID } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AuditRetention } from '../../../src/audit/audit-retention.js';
import { TestApp } from '../../helpers/test-app.js';

const DAY_MS = 86_400_000;

/** Inserts audit records made `days` ago (several at once with `count`); their ids. */
async function insertOld(app: TestApp, projectId: string | null, days: number, count = 1): Promise<string[]> {
  const rows = await app.dataSource.query<{ id: string }[]>(
    `INSERT INTO audit_events (id, project_id, actor_type, actor_id, action, resource_type, resource_id, created_at)
     SELECT gen_random_uuid(), $1, 'cli', NULL, 'api_key.created', 'api_key', $2, $3::timestamptz
       FROM generate_series(1, $4)
     RETURNING id`,
    [projectId, randomUUID(), new Date(Date.now() - days * DAY_MS), count],
  );
  return rows.map((row) => row.id);
}

const remaining = async (app: TestApp, ids: string[]) =>
  (await app.dataSource.query<{ id: string }[]>(`SELECT id FROM audit_events WHERE id = ANY($1::uuid[])`, [ids])).map(
    (row) => row.id,
  );

// On both databases: the DELETE with SKIP LOCKED, and on a server two instances pruning at the same moment.
describe('audit retention (AUDIT_RETENTION_DAYS)', () => {
  let app: TestApp;
  let projectId: string;
  let apiKey: string;

  beforeAll(async () => {
    app = await TestApp.start({ AUDIT_RETENTION_DAYS: '30' });
    ({ projectId, apiKey } = await app.ctx.newProject('retained'));
  });

  afterAll(() => app?.close());

  it('deletes records older than the retention, of every project and of none, and keeps the others', async () => {
    const old = [
      ...(await insertOld(app, projectId, 400)),
      ...(await insertOld(app, projectId, 31)),
      ...(await insertOld(app, null, 45)),
    ];
    const kept = [...(await insertOld(app, projectId, 29)), ...(await insertOld(app, null, 1))];
    const listed = async () => (await app.get('/v1/audit-events', { apiKey })).body as { id: string; action: string }[];
    const before = await listed();
    expect(before.map((event) => event.id)).toEqual(expect.arrayContaining(old.slice(0, 2)));

    expect(await app.app.get(AuditRetention).prune()).toBe(3);
    expect(await remaining(app, old)).toEqual([]);
    expect((await remaining(app, kept)).sort()).toEqual([...kept].sort());
    // The project's own recent records (its creation, its key) are still listed; the old ones are not.
    const after = await listed();
    expect(after.map((event) => event.id)).toEqual(before.map((event) => event.id).filter((id) => !old.includes(id)));
    expect(after.map((event) => event.action)).toEqual(expect.arrayContaining(['project.created', 'api_key.created']));

    // Nothing left to delete: a second run deletes nothing.
    expect(await app.app.get(AuditRetention).prune()).toBe(0);
  });

  it('deletes a backlog larger than one statement’s batch', async () => {
    const backlog = await insertOld(app, projectId, 60, 5_200);
    expect(await app.app.get(AuditRetention).prune()).toBe(5_200);
    expect(await remaining(app, backlog)).toEqual([]);
  });

  describe.skipIf(inject('databaseTemplate').kind !== 'server')('on two instances at the same moment', () => {
    let second: NestFastifyApplication;

    beforeAll(async () => {
      ({ app: second } = await app.startAnotherInstance('another instance', { AUDIT_RETENTION_DAYS: '30' }));
    });

    afterAll(() => second?.close());

    it('delete every old record once between them, and nothing else', async () => {
      const old = await insertOld(app, projectId, 90, 12_000);
      const kept = await insertOld(app, projectId, 10, 50);
      const deleted = await Promise.all([app.app.get(AuditRetention).prune(), second.get(AuditRetention).prune()]);
      expect(deleted[0] + deleted[1]).toBe(12_000);
      expect(await remaining(app, old)).toEqual([]);
      expect(await remaining(app, kept)).toHaveLength(50);
    });
  });
});

describe('audit retention, unset', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
  });

  afterAll(() => app?.close());

  it('keeps every record', async () => {
    const { projectId } = await app.ctx.newProject();
    const old = await insertOld(app, projectId, 3_650);
    expect(await app.app.get(AuditRetention).prune()).toBe(0);
    expect(await remaining(app, old)).toEqual(old);
  });
});
