/**
 * `npm run bench:metrics-cost`: the CPU time metrics add to one execute request, two ways, with metrics on and off
 * in alternating rounds. An end-to-end comparison in separate processes (bench:execute with BENCH_VARIANT_ENV)
 * cannot resolve a few µs on a 2-core machine; these can.
 *
 * 1. The recording calls alone (the HTTP histogram, the request budget's decision, the execution counter, the
 *    upstream histogram), METRICS_CALLS times.
 * 2. End to end in one process: the trivial upstream of bench/execute.ts and two services made by createApiApp
 *    from copies of one seeded data folder (embedded database, default settings), one with metrics off and one
 *    with METRICS_PORT set; blocks of METRICS_REQUESTS identical execute requests (16 at a time) go to each in
 *    turn, METRICS_ROUNDS times after three warm-up rounds. Per block, the process's CPU time per request (client
 *    and upstream in both); the figure is the median over the rounds of on minus off, with its quartiles.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Pool } from 'undici';
import { createApiApp, stopApiApp } from '../src/api-app.js';
import { loadConfig } from '../src/config/index.js';
import { Metrics } from '../src/observability/index.js';
import { createUpstream, EXECUTE_BODY, FUNCTION_NAME, round, seed } from './execute.js';
import { type CpuPath, cpuPerRequest, listenLocal, median } from './support.js';

const CALLS = Number(process.env.METRICS_CALLS ?? 500_000);
const ROUNDS = Number(process.env.METRICS_ROUNDS ?? 15);
const REQUESTS = Number(process.env.METRICS_REQUESTS ?? 2000);
const CONNECTIONS = 16;

function perRequest(metrics: Metrics): void {
  metrics.httpRequest('POST', '/v1/functions/:function_name/execute', 200, 0.0021);
  metrics.rateLimit('request', true);
  metrics.execution('BENCH', 'api_key', true);
  metrics.upstreamCall('BENCH', '2xx', 0.0009);
}

function recordingCalls(): Record<string, number[]> {
  const variants = { on: new Metrics(loadConfig({ METRICS_PORT: '0' })), off: new Metrics(loadConfig({})) };
  const results: Record<string, number[]> = { on: [], off: [] };
  for (let pass = 0; pass < 3; pass += 1) {
    for (const [label, metrics] of Object.entries(variants)) {
      for (let i = 0; i < CALLS / 10; i += 1) {
        perRequest(metrics);
      }
      const before = process.cpuUsage();
      for (let i = 0; i < CALLS; i += 1) {
        perRequest(metrics);
      }
      const spent = process.cpuUsage(before);
      results[label].push(round((spent.user + spent.system) / CALLS));
    }
  }
  return results;
}

async function endToEnd(): Promise<Record<string, unknown>> {
  const upstream = createUpstream();
  const upstreamUrl = await listenLocal(upstream);
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-metrics-cost-'));
  const env = { DATA_DIR: dataDir, SECRETS_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'warn' };
  const apiKey = await seed(env, upstreamUrl);
  const apps: NestFastifyApplication[] = [];
  const paths: CpuPath[] = [];
  try {
    for (const [label, extra] of [
      ['off', {}],
      ['on', { METRICS_PORT: '0' }],
    ] as const) {
      const copy = `${dataDir}-${label}`;
      cpSync(dataDir, copy, { recursive: true });
      const app = await createApiApp({
        database: { holder: `bench:metrics-cost:${label}`, runMigrations: true },
        env: { ...env, DATA_DIR: copy, ...extra },
      });
      apps.push(app);
      await app.listen({ port: 0, host: '127.0.0.1' });
      paths.push({
        label,
        pool: new Pool(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`, {
          connections: CONNECTIONS,
        }),
        path: `/v1/functions/${FUNCTION_NAME}/execute`,
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: EXECUTE_BODY,
        expect: '"success":true',
      });
    }
    for (let warm = 0; warm < 3; warm += 1) {
      for (const path of paths) {
        await cpuPerRequest(path, REQUESTS, CONNECTIONS);
      }
    }
    const off: number[] = [];
    const on: number[] = [];
    for (let pass = 0; pass < ROUNDS; pass += 1) {
      // Each round in a rotated order, so that neither always follows the other.
      for (const path of pass % 2 === 0 ? paths : [...paths].reverse()) {
        (path.label === 'off' ? off : on).push(await cpuPerRequest(path, REQUESTS, CONNECTIONS));
      }
    }
    const added = on.map((value, index) => value - off[index]).sort((x, y) => x - y);
    return {
      rounds: ROUNDS,
      requests_per_block: REQUESTS,
      cpu_us_per_request_off_median: round(median(off)),
      cpu_us_per_request_on_median: round(median(on)),
      added_cpu_us_per_request_median: round(median(added)),
      added_cpu_us_per_request_quartiles: [
        round(added[Math.floor(added.length / 4)]),
        round(added[Math.floor((3 * added.length) / 4)]),
      ],
    };
  } finally {
    await Promise.all(paths.map((path) => path.pool.close()));
    for (const app of apps) {
      await stopApiApp(app, 1000);
    }
    upstream.close();
    upstream.closeAllConnections();
    for (const folder of [dataDir, `${dataDir}-off`, `${dataDir}-on`]) {
      rmSync(folder, { recursive: true, force: true });
    }
  }
}

const calls = recordingCalls();
const endToEndFigures = await endToEnd();
process.stdout.write(
  `${JSON.stringify(
    {
      benchmark: 'metrics-cost',
      target_us: 5,
      recording_calls_cpu_us_per_request_by_round: calls,
      end_to_end_in_one_process: endToEndFigures,
    },
    null,
    2,
  )}\n`,
);
