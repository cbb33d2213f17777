/**
 * `npm run bench:auth-flood`: whether a flood of wrong API keys from one address slows the valid requests
 * beside it (issue #34). The same execution as bench:execute's (c) path, measured with autocannon at
 * concurrency 8 in alternating rounds:
 *   (q) quiet: nothing else reaches the service;
 *   (r) repeated: another process sends BENCH_FLOOD_PER_S (default 1,000) requests a second with one revoked
 *       key, as a worker retrying it in a loop would;
 *   (n) new: the same rate, every key a new random one shaped like a real key (each one a database lookup:
 *       the worst case).
 * The flood comes from the same address as the valid requests, which is therefore over its failure budget
 * (AUTH_FAILURE_LIMIT, default 20 a minute) for the whole run. Prints one JSON object: the valid requests'
 * median, p99 and the service's CPU time per valid request (flood included: what the valid requests pay for
 * the flood), the statuses the flood got and the service's CPU time per flood request. BENCH_DURATION_S (default 5) and BENCH_ROUNDS (default 3).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import {
  EXECUTE_BODY,
  figures,
  forkRole,
  freePort,
  FUNCTION_NAME,
  measure,
  type Sample,
  seed,
  startService,
  type Target,
} from './execute.js';

const SELF = fileURLToPath(import.meta.url);
const FLOOD_TICK_MS = 10;

/** The flood: `perSecond` GETs with wrong keys until told to stop; reports the statuses it got. */
function runFlood(url: string, mode: 'repeated' | 'new', perSecond: number, revokedKey: string): void {
  const pool = new Pool(url, { connections: 32 });
  const statuses: Record<string, number> = {};
  const perTick = Math.max(1, Math.round((perSecond * FLOOD_TICK_MS) / 1000));
  const send = (key: string) =>
    pool
      .request({ method: 'GET', path: '/v1/app-configurations', headers: { 'x-api-key': key } })
      .then(async (response) => {
        await response.body.dump();
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      })
      .catch(() => {
        statuses.error = (statuses.error ?? 0) + 1;
      });
  const timer = setInterval(() => {
    for (let i = 0; i < perTick; i += 1) {
      void send(mode === 'repeated' ? revokedKey : `pb_${randomBytes(32).toString('base64url')}`);
    }
  }, FLOOD_TICK_MS);
  process.send?.({ ready: true });
  process.once('message', () => {
    clearInterval(timer);
    void pool.close().then(() => {
      process.send?.({ statuses }, () => process.exit(0));
    });
  });
}

function startFlood(
  url: string,
  mode: 'repeated' | 'new',
  perSecond: number,
  revokedKey: string,
): Promise<{ stop: () => Promise<Record<string, number>> }> {
  const child = fork(SELF, ['flood', url, mode, String(perSecond), revokedKey], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', () =>
      resolve({
        stop: () =>
          new Promise((done) => {
            child.once('message', (message: { statuses: Record<string, number> }) => done(message.statuses));
            child.send('stop');
          }),
      }),
    );
    child.once('exit', (code) => reject(new Error(`the flood exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION_S ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const perSecond = Number(process.env.BENCH_FLOOD_PER_S ?? 1000);
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-flood-'));
  const children: ChildProcess[] = [];
  try {
    const upstream = await forkRole('upstream');
    children.push(upstream.child);
    const port = await freePort();
    const env = {
      DATA_DIR: dataDir,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
    };
    const apiKey = await seed(env, `http://127.0.0.1:${upstream.port}`);
    const service = await startService(env);
    children.push(service);
    const base = `http://127.0.0.1:${port}`;
    // A key that was valid once and no longer is: the seed's key is the only one, so a well-shaped stranger
    // stands in (the service cannot tell a revoked key from an unknown one: both miss the database).
    const revokedKey = `pb_${randomBytes(32).toString('base64url')}`;
    const target: Target = {
      label: 'valid',
      pid: service.pid,
      url: `${base}/v1/functions/${FUNCTION_NAME}/execute`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: EXECUTE_BODY,
    };
    await measure(target, 8, 2); // warm-up
    const samples: Record<string, Sample[]> = {};
    const floodStatuses: Record<string, Record<string, number>> = { repeated: {}, new: {} };
    for (let index = 0; index < rounds; index += 1) {
      for (const mode of ['quiet', 'repeated', 'new'] as const) {
        const flood = mode === 'quiet' ? undefined : await startFlood(base, mode, perSecond, revokedKey);
        (samples[mode] ??= []).push(await measure(target, 8, seconds));
        if (flood) {
          for (const [status, count] of Object.entries(await flood.stop())) {
            floodStatuses[mode][status] = (floodStatuses[mode][status] ?? 0) + count;
          }
        }
      }
    }
    const quiet = figures(samples.quiet ?? []);
    /** CPU the service spent per flood request: the round's CPU beyond what its valid requests cost when quiet. */
    const perFloodRequest = (mode: 'repeated' | 'new') => {
      const cpuMs = (samples[mode] ?? []).reduce(
        (sum, s) => sum + s.cpuMs - (s.requests * quiet.server_cpu_us_per_request) / 1000,
        0,
      );
      const flood = Object.values(floodStatuses[mode]).reduce((sum, count) => sum + count, 0);
      return Math.round((cpuMs * 1000) / flood);
    };
    const report = {
      benchmark: 'auth-flood',
      node: process.version,
      cpus: cpus().length,
      duration_s_per_round: seconds,
      rounds,
      flood_per_s: perSecond,
      valid_requests_at_concurrency_8: {
        quiet,
        beside_one_revoked_key_repeated: figures(samples.repeated ?? []),
        beside_new_random_keys: figures(samples.new ?? []),
      },
      flood_statuses: floodStatuses,
      service_cpu_us_per_flood_request: { repeated: perFloodRequest('repeated'), new: perFloodRequest('new') },
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) {
              resolve(undefined);
              return;
            }
            child.once('exit', resolve);
            child.kill('SIGTERM');
            setTimeout(resolve, 5000).unref();
          }),
      ),
    );
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'flood') {
  const [url, mode, perSecond, revokedKey] = process.argv.slice(3);
  runFlood(url, mode as 'repeated' | 'new', Number(perSecond), revokedKey);
} else {
  await main();
}
