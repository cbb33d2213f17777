import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Server } from 'node:http';
import { type Pool, request } from 'undici';

const run = promisify(execFile);

/** The repository root (this file runs from dist/bench/). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN = join(ROOT, 'dist', 'src', 'main.js');
/** The shared data beside the repository (or PATCHBAY_SHARED, for a worktree elsewhere): the ACI catalogue and the eval sets. */
export const SHARED = resolve(process.env.PATCHBAY_SHARED ?? join(ROOT, '..', 'shared'));

/** Environment of every child: a fixed key (so runs can reuse a data folder) and quiet logs. */
export function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', SECRETS_KEY: BENCH_SECRETS_KEY, ...extra };
  for (const key of Object.keys(env)) {
    // Settings of the developer's own shell must not leak into a measurement.
    if (key === 'DATABASE_URL' || key === 'DATA_DIR') {
      if (!(key in extra)) {
        delete env[key];
      }
    }
  }
  return env;
}

const BENCH_SECRETS_KEY = randomBytes(32).toString('base64');

/** Runs `patchbay <args>` and returns its standard output. */
export async function patchbay(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, [MAIN, ...args], {
    env: baseEnv(env),
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

export interface Service {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `patchbay serve` on a free loopback port and waits until it listens. */
export function startService(env: Record<string, string>): Promise<Service> {
  const child: ChildProcess = spawn(process.execPath, [MAIN, 'serve', '--port', '0'], {
    env: baseEnv({ HOST: '127.0.0.1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`patchbay serve did not start in time:\n${output}`));
    }, 600_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolvePromise({
          url: match[1],
          pid: child.pid as number,
          stop: () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`patchbay serve exited with ${code}:\n${output}`));
    });
  });
}

/**
 * GET `url` as JSON. `fresh` asks for a connection of its own, closed after the answer: for requests
 * spaced further apart than the service's keep-alive timeout, where a pooled socket may be one the
 * service has closed meanwhile.
 *
 * undici's `request`, not `fetch` (which undici also implements, with WHATWG streams, Headers and
 * Response objects around each call): on the 2-core machine the client's own work competes with the
 * service for a core. Against one PostgreSQL-backed service at 987 functions, alternating, three times
 * each (2026-11-28): function search p50 8.2–10.3 ms with fetch, 5.5–7.6 ms with `request`, while the
 * service's own time (Fastify's responseTime) had a p50 of 5.1 ms.
 */
export async function getJson<T>(url: string, apiKey: string, fresh = false): Promise<{ body: T; ms: number }> {
  const started = performance.now();
  const response = await request(url, { headers: { 'x-api-key': apiKey }, reset: fresh });
  const body = (await response.body.json()) as T;
  const ms = performance.now() - started;
  if (response.statusCode < 200 || response.statusCode > 299) {
    throw new Error(`${url} answered ${response.statusCode}: ${JSON.stringify(body)}`);
  }
  return { body, ms };
}

export function searchUrl(base: string, kind: 'apps' | 'functions', query: Record<string, string | string[]>): string {
  const url = new URL(`/v1/${kind}/search`, base);
  for (const [key, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      url.searchParams.append(key, item);
    }
  }
  return url.toString();
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) {
    return NaN;
  }
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

export interface EvalLine {
  intent: string;
  expected: string[];
  kind: string;
}

export function readJsonl(path: string): EvalLine[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as EvalLine);
}

/** Resident set size of a process, from /proc (Linux), in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/** A Markdown table. */
export function table(header: string[], rows: (string | number)[][]): string {
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const row of rows) {
    lines.push(`| ${row.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** Listens on a free loopback port; the server's base URL. */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** One path of an in-process CPU comparison: POSTs of one body to one address. */
export interface CpuPath {
  label: string;
  pool: Pool;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** When given, an answer's text must contain it (`"success":true` for an execution). */
  expect?: string;
}

/**
 * CPU µs of this process (process.cpuUsage: every thread, to the microsecond) per request over `amount` POSTs,
 * `connections` at a time. Any answer other than 200 (or without `expect`) throws: a figure of failures is no
 * figure. The in-process comparisons (guard:execute, bench:metrics-cost) take these blocks in turn, so that
 * the machine's load weighs on each path alike.
 */
export async function cpuPerRequest(target: CpuPath, amount: number, connections: number): Promise<number> {
  let sent = 0;
  const before = process.cpuUsage();
  const connection = async () => {
    while (sent < amount) {
      sent += 1;
      const answer = await target.pool.request({
        method: 'POST',
        path: target.path,
        headers: target.headers,
        body: target.body,
      });
      const text = await answer.body.text();
      if (answer.statusCode !== 200 || (target.expect !== undefined && !text.includes(target.expect))) {
        throw new Error(`${target.label} answered ${answer.statusCode}: ${text}`);
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, connection));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / amount;
}

export const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
