import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream } from '../e2e/execution/upstream.js';
import { embeddedEnv, startServe, stopServe } from '../helpers/cli.js';
import { PrivatePostgres } from './private-postgres.js';
import { APP, SLOW, client, configureAndLink, execute, prepareCatalogAndProject } from './service.js';

const OUTAGE_MS = 6_000;
/** Longest a request may take while the database is away: it fails fast, it does not hang. */
const FAIL_FAST_MS = 3_000;
/** Longest the service may take to serve every request again once the database is back. */
const RECOVERY_MS = 15_000;

type Call = ReturnType<typeof client>;
type Answer = Awaited<ReturnType<Call>>;

async function eventually<T>(what: string, timeoutMs: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt();
    if (result !== undefined) {
      return result;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The mixed traffic of the issue: search, definition, execute, a configuration change, a read of accounts. */
function mixedRequests(call: Call, n: number): Promise<Answer>[] {
  return [
    call('GET', '/v1/functions/search?intent=slow%20upstream&limit=3'),
    call('GET', `/v1/functions/${SLOW}/definition`),
    execute(call, n),
    call('PATCH', `/v1/app-configurations/${APP}`, { enabled: true }),
    call('GET', `/v1/linked-accounts?app_name=${APP}`),
  ];
}

/**
 * A database outage under load, on a PostgreSQL cluster of the test's own (stopped with
 * `pg_ctl -m immediate` and started again): the service stays up, says 503 fast while the database
 * is away, serves everything again without a restart, and writes the executions it ran meanwhile.
 */
describe.skipIf(!process.env.DATABASE_URL || !PrivatePostgres.available())(
  'PostgreSQL stops and starts again under load',
  () => {
    // The embedded database lives inside the service process: it has no outage of its own to survive.
    let postgres: PrivatePostgres;
    let upstream: Upstream;
    let dataDir: string;
    let env: NodeJS.ProcessEnv;
    let apiKey: string;

    beforeAll(async () => {
      postgres = await PrivatePostgres.start();
      upstream = await Upstream.start();
      dataDir = mkdtempSync(join(tmpdir(), 'patchbay-outage-'));
      env = {
        ...embeddedEnv(dataDir),
        DATABASE_URL: postgres.url,
        SECRETS_KEY: randomBytes(32).toString('base64'),
        CACHE_SYNC_INTERVAL_MS: '200',
        EXECUTION_LOG_FLUSH_MS: '2000',
      };
      apiKey = await prepareCatalogAndProject(env, upstream.url);
    });

    afterAll(async () => {
      await upstream?.close();
      postgres?.destroy();
      if (dataDir) {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    // Skipped, not passing: since the merge of the API-key guard, rate limits and change notifications, the
    // first requests sent after PostgreSQL is killed get no answer at all (the search request of the mixed
    // traffic hangs past 30 s; the same requests sent by curl a moment later answer 503 in 3 ms). Passed before
    // that merge. Issue #16 tracks it; the test stays here, unchanged, to be switched back on with the fix.
    it('503 fast during the outage, liveness 200, everything back without a restart, no execution lost', async () => {
      const server = await startServe(env);
      const call = client(server.url, apiKey);
      let executed = 0;
      const count = (answers: Answer[]) => {
        executed += answers.filter((a) => a.status === 200 && (a.body as { success?: boolean }).success).length;
      };
      try {
        await configureAndLink(call);
        const before = await Promise.all(mixedRequests(call, 0));
        expect(before.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
        count(before);
        // Executions answered just before the stop: their log rows are written (EXECUTION_LOG_FLUSH_MS
        // later) while the database is away, and must be kept until it is back.
        const unflushed = await Promise.all(Array.from({ length: 5 }, (_, n) => execute(call, 100 + n)));
        expect(unflushed.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
        count(unflushed);

        postgres.stopServer();
        const outageEnds = Date.now() + OUTAGE_MS;
        const during: Answer[] = [];
        for (let n = 1; Date.now() < outageEnds; n += 1) {
          const answers = await Promise.all(mixedRequests(call, n));
          during.push(...answers);
          count(answers);
          const live = await call('GET', '/v1/health');
          expect(live.status).toBe(200);
          const ready = await call('GET', '/v1/health/ready');
          expect(ready.status).toBe(503);
          expect(ready.body).toEqual({ error: expect.stringContaining('Database unavailable') });
        }
        for (const answer of during) {
          expect(answer.ms).toBeLessThan(FAIL_FAST_MS);
          if (answer.status !== 200) {
            expect(answer.status, JSON.stringify(answer.body)).toBe(503);
            expect(answer.body).toEqual({ error: expect.stringContaining('Database unavailable') });
          }
        }
        // Requests that need the database (the configuration change) were refused, not hung.
        expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(0);
        expect(server.child.exitCode).toBeNull();

        postgres.startServer();
        const restarted = Date.now();
        await eventually('readiness', RECOVERY_MS, async () =>
          (await call('GET', '/v1/health/ready')).status === 200 ? true : undefined,
        );
        const after = await eventually('every request succeeding', RECOVERY_MS, async () => {
          const answers = await Promise.all(mixedRequests(call, 10_000));
          return answers.every((a) => a.status === 200) ? answers : undefined;
        });
        count(after);
        expect(Date.now() - restarted).toBeLessThan(RECOVERY_MS);

        // Executions that ran while the database was away reach the log once it is back.
        await eventually('every execution in the log', RECOVERY_MS, async () => {
          const log = await call('GET', '/v1/executions?limit=1000&success=true');
          return log.status === 200 && (log.body as unknown[]).length === executed ? true : undefined;
        });
      } finally {
        if (server.child.exitCode === null) {
          expect(await stopServe(server.child)).toBe(0);
        }
      }
    });
  },
);
