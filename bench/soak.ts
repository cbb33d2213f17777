/**
 * `npm run bench:soak`: fixed-rate mixed traffic against one `patchbay serve` for a long time —
 * intent search, function definition and execution against a local upstream, in equal shares — to
 * see whether latency, errors or memory drift. Prints one line per minute: requests answered per
 * second, p50/p99 per operation, errors (by kind), and the service's resident set size (the median of
 * samples taken every second from /proc/<pid>/status; the service has no endpoint telling its heap, so
 * RSS only). Ends with a JSON summary: the last
 * minute's execute p99 against the first measured minute's, and RSS growth since it.
 *
 * SOAK_MINUTES (measured minutes, default 10, fractions allowed), SOAK_WARMUP_MINUTES (minutes of the same
 * traffic before them, printed but not judged, default 5: at 20 requests/s the service's RSS climbs for its first
 * four minutes as V8 sizes its heap and compiles the hot paths, then stays flat — measured 2026-11-25 and -26 on both
 * databases), SOAK_RATE (requests per second in all, default 20).
 * On the embedded database by default; with DATABASE_URL, on a fresh database created on that server
 * and dropped at the end. Requests are sent on schedule whether or not earlier ones have answered
 * (open loop), so a slow service shows as latency, not as a lower rate.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { patchbay, percentile, rssMb, startService } from './support.js';

const APP = 'SOAK';
const FUNCTION = `${APP}__GET_TIDES`;
const OWNER = 'soak-user';
const OPERATIONS = ['search', 'definition', 'execute'] as const;
type Operation = (typeof OPERATIONS)[number];

interface Minute {
  latencies: Record<Operation, number[]>;
  errors: number;
  /** Failures by kind: the status, `success:false`, or the network error's message. */
  errorKinds: Map<string, number>;
  /** The service's RSS, sampled every second (MB). */
  rss: number[];
}

const newMinute = (): Minute => ({
  latencies: { search: [], definition: [], execute: [] },
  errors: 0,
  errorKinds: new Map(),
  rss: [],
});

/**
 * RSS is sampled every second and each minute reports the median: a single sample at the minute's end
 * moved by up to 30 MB either way with garbage collection (a 10-minute run on PostgreSQL, 2026-11-25:
 * 191 MB at minute 2, 217–219 MB on either side), which would hide or fake the 5 MB target.
 */
const RSS_SAMPLE_MS = 1_000;

/** A trivial JSON upstream on 127.0.0.1. */
async function startUpstream(): Promise<{ url: string; close: () => void }> {
  const body = JSON.stringify({ harbour: 'soak', tides: [1.2, 3.4, 0.8, 2.9] });
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      response.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() };
}

function catalogFolder(root: string, upstreamUrl: string): string {
  const dir = join(root, 'soak');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'app.json'),
    JSON.stringify({
      name: APP,
      display_name: 'Soak',
      provider: 'Patchbay bench',
      version: '1.0.0',
      description: 'Tide tables of harbours, for the soak benchmark.',
      logo: 'https://example.com/soak.svg',
      categories: ['Testing'],
      visibility: 'public',
      active: true,
      security_schemes: { no_auth: {} },
      default_security_credentials_by_scheme: {},
    }),
  );
  writeFileSync(
    join(dir, 'functions.json'),
    JSON.stringify([
      {
        name: FUNCTION,
        description: 'Reads the tide table of a harbour',
        tags: ['tides'],
        visibility: 'public',
        active: true,
        protocol: 'rest',
        protocol_data: { method: 'GET', path: '/tides', server_url: upstreamUrl },
        parameters: {
          type: 'object',
          properties: {
            query: {
              type: 'object',
              properties: { harbour: { type: 'string' } },
              required: ['harbour'],
              visible: ['harbour'],
              additionalProperties: false,
            },
          },
          required: ['query'],
          visible: ['query'],
          additionalProperties: false,
        },
      },
    ]),
  );
  return dir;
}

/** undefined when the request succeeded, else what went wrong (for the per-minute error kinds). */
async function send(base: string, apiKey: string, operation: Operation): Promise<string | undefined> {
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const response =
    operation === 'search'
      ? await fetch(`${base}/v1/functions/search?intent=tide%20table%20of%20a%20harbour&limit=5`, { headers })
      : operation === 'definition'
        ? await fetch(`${base}/v1/functions/${FUNCTION}/definition`, { headers })
        : await fetch(`${base}/v1/functions/${FUNCTION}/execute`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ function_input: { query: { harbour: 'brest' } }, linked_account_owner_id: OWNER }),
          });
  const text = await response.text();
  if (!response.ok) {
    return `${operation} ${response.status}`;
  }
  return operation !== 'execute' || (JSON.parse(text) as { success: boolean }).success
    ? undefined
    : 'execute success:false';
}

async function main(): Promise<void> {
  const minutes = Number(process.env.SOAK_MINUTES ?? 10);
  const warmup = Number(process.env.SOAK_WARMUP_MINUTES ?? 5);
  const rate = Number(process.env.SOAK_RATE ?? 20);
  const server = process.env.DATABASE_URL;
  const work = mkdtempSync(join(tmpdir(), 'patchbay-soak-'));
  const env: Record<string, string> = { DATA_DIR: join(work, 'data'), SECRETS_KEY: randomBytes(32).toString('base64') };
  let dropDatabase: (() => Promise<void>) | undefined;
  if (server) {
    const name = `patchbay_soak_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    env.DATABASE_URL = url.toString();
    // The request limit (on by default on PostgreSQL) would refuse a long run at a high rate.
    env.RATE_LIMIT_REQUESTS = '0';
    dropDatabase = async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    };
  }
  const upstream = await startUpstream();
  try {
    await patchbay(['migrate'], env);
    await patchbay(['catalog', 'import', catalogFolder(work, upstream.url)], env);
    const apiKey = (
      JSON.parse(await patchbay(['projects', 'create', '--name', 'soak', '--json'], env)) as { api_key: string }
    ).api_key;
    const service = await startService(env);
    try {
      const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
      for (const [path, body] of [
        ['/v1/app-configurations', { app_name: APP, security_scheme: 'no_auth' }],
        ['/v1/linked-accounts/no-auth', { app_name: APP, linked_account_owner_id: OWNER }],
      ] as const) {
        const response = await fetch(`${service.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
        if (!response.ok) {
          throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
        }
      }

      console.log(
        `soak: ${warmup} min of warm-up, then ${minutes} min measured, at ${rate} requests/s (search, definition, execute in turn) on ${server ? 'PostgreSQL' : 'the embedded database'}; RSS of the service (no heap endpoint exists)`,
      );
      const rows: { minute: number; rps: number; p99: Record<Operation, number>; errors: number; rss: number }[] = [];
      const started = performance.now();
      const end = started + (warmup + minutes) * 60_000;
      let current = newMinute();
      let minuteStart = started;
      const rssTimer = setInterval(() => current.rss.push(rssMb(service.pid)), RSS_SAMPLE_MS);
      const inFlight = new Set<Promise<void>>();
      const closeMinute = (now: number) => {
        const answered = OPERATIONS.reduce((sum, op) => sum + current.latencies[op].length, 0) + current.errors;
        const p = (op: Operation, q: number) => percentile(current.latencies[op], q);
        const row = {
          minute: rows.length + 1,
          rps: answered / ((now - minuteStart) / 1000),
          p99: { search: p('search', 99), definition: p('definition', 99), execute: p('execute', 99) },
          errors: current.errors,
          rss: current.rss.length > 0 ? percentile(current.rss, 50) : rssMb(service.pid),
        };
        const kinds = [...current.errorKinds].map(([kind, count]) => `${kind} ×${count}`).join(', ');
        rows.push(row);
        console.log(
          `${row.minute <= warmup ? 'warm-up ' : ''}minute ${row.minute}: ${row.rps.toFixed(1)} req/s; ` +
            OPERATIONS.map((op) => `${op} p50 ${p(op, 50).toFixed(1)} ms p99 ${p(op, 99).toFixed(1)} ms`).join('; ') +
            `; errors ${row.errors}${kinds ? ` (${kinds})` : ''}; RSS ${row.rss.toFixed(1)} MB (median of ${current.rss.length} samples)`,
        );
        current = newMinute();
        minuteStart = now;
      };
      for (let n = 0; ; n += 1) {
        const due = started + (n * 1000) / rate;
        if (due >= end) {
          break;
        }
        const wait = due - performance.now();
        if (wait > 0) {
          await new Promise((resolve) => setTimeout(resolve, wait));
        }
        if (performance.now() - minuteStart >= 60_000) {
          closeMinute(performance.now());
        }
        const operation = OPERATIONS[n % OPERATIONS.length];
        const minute = current;
        const sent = performance.now();
        const failed = (kind: string) => {
          minute.errors += 1;
          minute.errorKinds.set(kind, (minute.errorKinds.get(kind) ?? 0) + 1);
        };
        const request = send(service.url, apiKey, operation).then(
          (failure) => {
            if (failure === undefined) {
              minute.latencies[operation].push(performance.now() - sent);
            } else {
              failed(failure);
            }
          },
          (error: unknown) => failed(`${operation} ${String(error)}`),
        );
        inFlight.add(request);
        void request.finally(() => inFlight.delete(request));
      }
      await Promise.all(inFlight);
      clearInterval(rssTimer);
      if (OPERATIONS.some((op) => current.latencies[op].length > 0) || current.errors > 0) {
        closeMinute(performance.now());
      }
      // Drift is judged on the measured minutes only: from the first after warm-up to the last.
      const measured = rows.length > Math.ceil(warmup) ? rows.slice(Math.ceil(warmup)) : rows;
      const baseline = measured[0];
      const last = rows[rows.length - 1];
      console.log(
        JSON.stringify({
          database: server ? 'postgresql' : 'embedded',
          minutes,
          warmup_minutes: warmup,
          rate,
          errors: rows.reduce((sum, row) => sum + row.errors, 0),
          errors_measured: measured.reduce((sum, row) => sum + row.errors, 0),
          baseline_minute: baseline.minute,
          execute_p99_baseline_ms: Number(baseline.p99.execute.toFixed(1)),
          execute_p99_last_ms: Number(last.p99.execute.toFixed(1)),
          execute_p99_change_pct: Number(((last.p99.execute / baseline.p99.execute - 1) * 100).toFixed(1)),
          rss_baseline_mb: Number(baseline.rss.toFixed(1)),
          rss_last_mb: Number(last.rss.toFixed(1)),
          rss_growth_mb: Number((last.rss - baseline.rss).toFixed(1)),
        }),
      );
    } finally {
      await service.stop();
    }
  } finally {
    upstream.close();
    await dropDatabase?.();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
