import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/database/migrations/index.js';
import { embeddedEnv, runCli, startServe } from '../helpers/cli.js';
import { withDatabase } from '../helpers/database-url.js';

const INSTANCES = 3;
/** Three services starting together on a loaded 2-core machine (one alone starts in a few seconds). */
const START_TIMEOUT_MS = 90_000;
/** The name of every migration, as TypeORM records it (the class name). */
const MIGRATION_NAMES = MIGRATIONS.map((migration) => migration.name).sort();
/**
 * What a failed start or migration writes (both seen without the lock): TypeORM's `Migration "…"
 * failed, error: …` (plain text), then Nest's "Unable to connect to the database. Retrying" with the
 * QueryFailedError, logged at level error (50 in the service's JSON lines); any fatal line too.
 */
const FAILURE = /Migration "[^"]*" failed|Unable to connect to the database|QueryFailedError|"level":(?:50|60)\b/;

type Instance = Awaited<ReturnType<typeof startServe>>;

/**
 * Several instances started at once on an empty PostgreSQL database (a scaled deployment's first
 * start, or a release with new migrations rolled out to every replica together): they take turns
 * applying the migrations (an advisory lock), so every one starts cleanly, and each migration is
 * applied exactly once. The embedded database belongs to one process (DATA_DIR is locked), so there
 * are never two instances to race.
 */
const skipped = process.env.DATABASE_URL
  ? undefined
  : 'needs PostgreSQL: the embedded database belongs to one process, no second instance can migrate it';

describe.skipIf(skipped)(
  `instances migrating one new database at once${skipped ? ` (skipped: ${skipped})` : ''}`,
  () => {
    const server = process.env.DATABASE_URL as string;
    let admin: DataSource;
    let database: string;
    let env: NodeJS.ProcessEnv;
    let dataDir: string;
    let instances: Instance[] = [];

    beforeEach(async () => {
      // A database of its own, empty: not a copy of the migrated template the other tests start from.
      database = `patchbay_m_${randomBytes(6).toString('hex')}`;
      admin = new DataSource({ type: 'postgres', url: server });
      await admin.initialize();
      await admin.query(`CREATE DATABASE "${database}"`);
      dataDir = mkdtempSync(join(tmpdir(), 'patchbay-migrations-'));
      env = {
        ...embeddedEnv(dataDir, { LOG_LEVEL: 'info' }),
        DATABASE_URL: withDatabase(server, database),
        SECRETS_KEY: randomBytes(32).toString('base64'),
      };
    });

    afterEach(async () => {
      for (const instance of instances) {
        if (instance.child.exitCode === null && instance.child.signalCode === null) {
          const exited = once(instance.child, 'exit');
          instance.child.kill('SIGTERM');
          await exited;
        }
      }
      instances = [];
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /**
     * Holds every process at the door of the migrations, then lets them all in at once. Processes
     * spawned together reach their migrations up to seconds apart here (Nest boots first), and the
     * migrations take well under a second, so left alone they rarely overlap (without the lock the
     * test passed once in two runs). The test creates the migrations table in a transaction it keeps
     * open: every process that tries to create it waits for that transaction; once `INSTANCES`
     * sessions wait for a lock (on that table, or on the advisory lock with the fix), it rolls back.
     */
    async function atTheDoor<T>(start: () => Promise<T>): Promise<T> {
      const db = new DataSource({ type: 'postgres', url: env.DATABASE_URL as string, extra: { max: 2 } });
      await db.initialize();
      const door = db.createQueryRunner();
      try {
        await door.startTransaction();
        await door.query('CREATE TABLE migrations (id integer)');
        const started = start();
        const deadline = Date.now() + START_TIMEOUT_MS;
        for (;;) {
          const [{ waiting }] = await db.query<{ waiting: number }[]>(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`,
            [database],
          );
          if (waiting >= INSTANCES || Date.now() > deadline) {
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await door.rollbackTransaction();
        return await started;
      } finally {
        await door.release();
        await db.destroy();
      }
    }

    /** Each migration's name and how many times the database records it as applied. */
    async function appliedMigrations(): Promise<Record<string, number>> {
      const db = new DataSource({ type: 'postgres', url: env.DATABASE_URL as string });
      await db.initialize();
      try {
        const rows = await db.query<{ name: string; times: number }[]>(
          'SELECT name, count(*)::int AS times FROM migrations GROUP BY name',
        );
        return Object.fromEntries(rows.map((row) => [row.name, row.times]));
      } finally {
        await db.destroy();
      }
    }

    it(`starts ${INSTANCES} services together: all become ready and serve, each migration is applied once`, async () => {
      const started = await atTheDoor(() =>
        Promise.allSettled(Array.from({ length: INSTANCES }, () => startServe(env, [], START_TIMEOUT_MS))),
      );
      instances = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      expect(
        started.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : [])),
        'every instance starts',
      ).toEqual([]);

      for (const instance of instances) {
        const lines = instance.output().split('\n');
        expect(
          lines.filter((line) => FAILURE.test(line)),
          `what instance ${instances.indexOf(instance) + 1} logged on start`,
        ).toEqual([]);
      }
      expect(await appliedMigrations()).toEqual(Object.fromEntries(MIGRATION_NAMES.map((name) => [name, 1])));

      const project = await runCli(['projects', 'create', '--name', 'migrations', '--json'], env);
      expect(project.code, project.stderr).toBe(0);
      const apiKey = (JSON.parse(project.stdout) as { api_key: string }).api_key;
      for (const instance of instances) {
        const ready = await fetch(`${instance.url}/v1/health/ready`);
        expect(ready.status, `readiness of ${instance.url}`).toBe(200);
        const answer = await fetch(`${instance.url}/v1/app-configurations`, { headers: { 'x-api-key': apiKey } });
        expect(answer.status, `${instance.url}: ${await answer.clone().text()}`).toBe(200);
        expect(await answer.json()).toEqual([]);
      }
    });

    it(`runs \`patchbay migrate\` ${INSTANCES} times at once: one applies everything, the others find nothing pending`, async () => {
      const runs = await atTheDoor(() =>
        Promise.all(Array.from({ length: INSTANCES }, () => runCli(['migrate'], env))),
      );
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(0);
      }
      const outputs = runs.map((run) => run.stdout.trim());
      expect(outputs.filter((output) => output !== 'Database is up to date')).toEqual([
        `Applied: ${MIGRATIONS.map((migration) => migration.name).join(', ')}`,
      ]);
      expect(await appliedMigrations()).toEqual(Object.fromEntries(MIGRATION_NAMES.map((name) => [name, 1])));
    });
  },
);
