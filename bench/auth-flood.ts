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
 * Each phase also measures the valid requests at a fixed, moderate rate (BENCH_FIXED_RATE, default 300 a second,
 * over 8 connections): their median and p99 there are what "their normal latency" means for a client that is not
 * saturating the service. BENCH_COMPARE_DIST=<dist>[,<dist>…] adds other builds in the same alternating rounds.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
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

type Mode = 'quiet' | 'repeated' | 'new';
const MODES: Mode[] = ['quiet', 'repeated', 'new'];

/** One build under test: its service, its own copy of the seeded data, its samples. */
interface Build {
  label: string;
  dist: string;
  service: ChildProcess;
  base: string;
  /** Saturated (concurrency 8, as fast as the service answers) and at the fixed rate, per mode. */
  saturated: Record<Mode, Sample[]>;
  fixed: Record<Mode, Sample[]>;
  floodStatuses: Record<'repeated' | 'new', Record<string, number>>;
}

const emptySamples = (): Record<Mode, Sample[]> => ({ quiet: [], repeated: [], new: [] });

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION_S ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const perSecond = Number(process.env.BENCH_FLOOD_PER_S ?? 1000);
  const fixedRate = Number(process.env.BENCH_FIXED_RATE ?? 300);
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-flood-'));
  const dataDirs = [dataDir];
  const children: ChildProcess[] = [];
  try {
    const upstream = await forkRole('upstream');
    children.push(upstream.child);
    const env = {
      DATA_DIR: dataDir,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
    };
    const apiKey = await seed(env, `http://127.0.0.1:${upstream.port}`);
    // BENCH_COMPARE_DIST=<dist>[,<dist>…]: other builds, each from its own copy of the seeded data, measured in
    // the same alternating rounds (this build is `c`, the others `d`, `e`…, as in bench:execute).
    const dists = [
      { label: 'c', dist: 'this checkout', path: undefined as string | undefined },
      ...(process.env.BENCH_COMPARE_DIST ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '')
        .map((path, index) => ({ label: 'defghij'[index], dist: path, path: resolvePath(path) })),
    ];
    const builds: Build[] = [];
    for (const { label, dist, path } of dists) {
      const copied = `${dataDir}-${label}`;
      cpSync(dataDir, copied, { recursive: true });
      dataDirs.push(copied);
      const port = await freePort();
      const service = await startService({ ...env, DATA_DIR: copied, PORT: String(port) }, path);
      children.push(service);
      builds.push({
        label,
        dist,
        service,
        base: `http://127.0.0.1:${port}`,
        saturated: emptySamples(),
        fixed: emptySamples(),
        floodStatuses: { repeated: {}, new: {} },
      });
    }
    // A key that was valid once and no longer is: the seed's key is the only one, so a well-shaped stranger
    // stands in (the service cannot tell a revoked key from an unknown one: both miss the database).
    const revokedKey = `pb_${randomBytes(32).toString('base64url')}`;
    const target = (build: Build): Target => ({
      label: 'valid',
      pid: build.service.pid,
      url: `${build.base}/v1/functions/${FUNCTION_NAME}/execute`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: EXECUTE_BODY,
    });
    for (const build of builds) {
      await measure(target(build), 8, 2); // warm-up
    }
    for (let index = 0; index < rounds; index += 1) {
      for (const mode of MODES) {
        for (const build of builds) {
          const flood = mode === 'quiet' ? undefined : await startFlood(build.base, mode, perSecond, revokedKey);
          build.saturated[mode].push(await measure(target(build), 8, seconds));
          build.fixed[mode].push(await measure(target(build), 8, seconds, fixedRate));
          if (flood && mode !== 'quiet') {
            const statuses = build.floodStatuses[mode];
            for (const [status, count] of Object.entries(await flood.stop())) {
              statuses[status] = (statuses[status] ?? 0) + count;
            }
          }
        }
      }
    }
    const report = {
      benchmark: 'auth-flood',
      node: process.version,
      cpus: cpus().length,
      duration_s_per_round: seconds,
      rounds,
      flood_per_s: perSecond,
      fixed_rate_per_s: fixedRate,
      builds: Object.fromEntries(builds.map((build) => [build.label, buildReport(build)])),
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
    for (const dir of dataDirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

function buildReport(build: Build) {
  const quiet = figures(build.saturated.quiet);
  /**
   * CPU the service spent per flood request: each flooded phase's CPU (saturated and fixed-rate) beyond what its
   * valid requests cost in the same phase when quiet.
   */
  const perFloodRequest = (mode: 'repeated' | 'new') => {
    const quietFixed = figures(build.fixed.quiet);
    const extra = (samples: Sample[], perValidUs: number) =>
      samples.reduce((sum, s) => sum + s.cpuMs - (s.requests * perValidUs) / 1000, 0);
    const cpuMs =
      extra(build.saturated[mode], quiet.server_cpu_us_per_request) +
      extra(build.fixed[mode], quietFixed.server_cpu_us_per_request);
    const flood = Object.values(build.floodStatuses[mode]).reduce((sum, count) => sum + count, 0);
    return Math.round((cpuMs * 1000) / flood);
  };
  const fixed = (samples: Sample[]) => {
    const all = figures(samples);
    return { median_ms: all.median_ms, p99_ms: all.p99_ms, req_per_s: all.req_per_s, errors: all.errors };
  };
  return {
    build: build.dist,
    valid_requests_at_concurrency_8: {
      quiet,
      beside_one_revoked_key_repeated: figures(build.saturated.repeated),
      beside_new_random_keys: figures(build.saturated.new),
    },
    valid_requests_at_a_fixed_rate: {
      quiet: fixed(build.fixed.quiet),
      beside_one_revoked_key_repeated: fixed(build.fixed.repeated),
      beside_new_random_keys: fixed(build.fixed.new),
    },
    flood_statuses: build.floodStatuses,
    service_cpu_us_per_flood_request: { repeated: perFloodRequest('repeated'), new: perFloodRequest('new') },
  };
}

if (process.argv[2] === 'flood') {
  const [url, mode, perSecond, revokedKey] = process.argv.slice(3);
  runFlood(url, mode as 'repeated' | 'new', Number(perSecond), revokedKey);
} else {
  await main();
}
