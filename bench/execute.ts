/**
 * `npm run bench:execute`: what a function execution costs over the HTTP hop it wraps.
 *
 * Three paths, each served by its own process, measured with autocannon in alternating rounds at
 * concurrency 1 and 64:
 *   (a) direct: GET on a trivial local JSON upstream;
 *   (b) proxy:  a bare reverse proxy (node:http server + keep-alive undici client, no framework, no
 *               lookups) that takes the same POST body as /execute and wraps the upstream answer in
 *               {success, data} — the floor any Node proxy pays for the hop;
 *   (c) patchbay: POST /v1/functions/{name}/execute on the service (embedded database, LOG_LEVEL=warn),
 *               api_key scheme, validated input, execution log on.
 * Prints one JSON object. Latencies come from every response (autocannon's own histogram has 1 ms
 * resolution, too coarse here). BENCH_DURATION_S (default 5) and BENCH_ROUNDS (default 3) tune it;
 * BENCH_PROFILE_DIR writes a CPU profile of the service; BENCH_ONLY (e.g. "c") measures only those paths;
 * BENCH_VERBOSE prints each round's figures on stderr.
 * BENCH_COMPARE_DIST=<the dist/ folder of another checkout, built> adds (d): the same execution on that
 * build, served from its own copy of the seeded data, measured in the same alternating rounds, so two
 * builds are compared side by side on the same load (the seed is this checkout's; the other build
 * applies its own pending migrations at start). Several folders, comma-separated, add (d), (e), (f)…
 * BENCH_CONCURRENCY (default "1,64") names the concurrency levels measured.
 * BENCH_VARIANT_ENV=<JSON of settings> adds one more path after those: this build with those settings added
 * (e.g. {"METRICS_PORT":"0"} or TRACING_OTLP_ENDPOINT), measured in the same alternating rounds against (c).
 * With DATABASE_URL the services run on PostgreSQL: a fresh database per service, created on that server
 * from one seeded template and dropped at the end, with the server's default settings except the request
 * budget (RATE_LIMIT_REQUESTS, on by default there), raised so that no run reaches it: each request still
 * spends from it, so its statement is measured.
 * The report ends with `summary`: per build, the throughput ratio to the bare proxy at the highest
 * concurrency, the added median at concurrency 1, and the server CPU per request.
 *
 * BENCH_MCP=1 adds the remote-MCP path, measured after the others at concurrency 1 in alternating rounds:
 *   (m) a function of a remote MCP server's app (`protocol: mcp`, no_auth) run through
 *       POST /v1/functions/{name}/execute, Patchbay calling the tool on a local MCP server (the official
 *       v2 server SDK, 2026-07-28) with its kept connection;
 *   (s) its baseline: the same tool called directly on that server with the official v2 client SDK.
 * Both are driven one call at a time from this process; `mcp` in the report has their figures and
 * `summary.mcp` the added median (target <= 1 ms). BENCH_ONLY=m measures that path alone. The builds of
 * BENCH_COMPARE_DIST (and BENCH_VARIANT_ENV) run the same function in the same alternating rounds.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, Server as McpServer } from '@modelcontextprotocol/server';
import autocannon from 'autocannon';
import pg from 'pg';
import { Pool } from 'undici';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { SecretBox } from '../libs/common/src/index.js';
import { AppConfigurationEntity } from '../src/app-configurations/index.js';
import { AppEntity } from '../src/apps/index.js';
import { loadConfig } from '../src/config/index.js';
import { ChangeNotifications, databaseOptions, EmbeddedDatabase } from '../src/database/index.js';
import { ENTITIES } from '../src/entities.js';
import { FunctionEntity } from '../src/functions/index.js';
import { LinkedAccountEntity } from '../src/linked-accounts/index.js';
import { HeaderApiKeyStrategy, KnownKeys, ProjectsRepository, ProjectsService } from '../src/projects/index.js';
import { AuditRepository, AuditService, CLI_ACTOR } from '../src/audit/index.js';

const UPSTREAM_BODY = JSON.stringify({ id: 42, name: 'bench', tags: ['a', 'b'], ok: true });
export const FUNCTION_NAME = 'BENCH__GET_ITEM';
/** BENCH_MCP: the function of the remote MCP server's app, and its tool's input. */
const MCP_FUNCTION_NAME = 'BENCH_MCP__GET_ITEM';
const MCP_ARGUMENTS = { q: 'bench' };
export const OWNER = 'bench-user';
export const EXECUTE_BODY = JSON.stringify({
  function_input: { query: { q: 'bench' } },
  linked_account_owner_id: OWNER,
});
const SELF = fileURLToPath(import.meta.url);

export interface Sample {
  /** CPU time the serving process spent, in ms (NaN where /proc is not available). */
  cpuMs: number;
  /** Of which its main thread (the event loop; the rest is the embedded database's thread, GC and libuv helpers). */
  mainThreadCpuMs: number;
  requests: number;
  seconds: number;
  latencies: number[];
  errors: number;
}

export interface Figures {
  /** CPU time of the serving process per request, in µs: the cost of the path itself, whatever the load. */
  server_cpu_us_per_request: number;
  /** Of which the main thread's (the event loop). */
  main_thread_cpu_us_per_request: number;
  median_ms: number;
  p99_ms: number;
  req_per_s: number;
  errors: number;
}

// ---------------------------------------------------------------- child roles

/** (a) the upstream: a trivial JSON endpoint. */
export function createUpstream(): Server {
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(UPSTREAM_BODY),
      });
      response.end(UPSTREAM_BODY);
    });
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

/** (b) the bare proxy: parse the JSON body, GET the upstream over a keep-alive pool, wrap the answer. */
export function createProxy(upstreamUrl: string): Server {
  const pool = new Pool(upstreamUrl, { connections: 128, keepAliveTimeout: 60_000 });
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          function_input: { query: { q: string } };
        };
        const answer = await pool.request({
          method: 'GET',
          path: `/items?q=${encodeURIComponent(body.function_input.query.q)}`,
        });
        const data: unknown = JSON.parse(await answer.body.text());
        const out = JSON.stringify({ success: answer.statusCode < 300, data, error: null });
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
        response.end(out);
      })().catch(() => {
        response.writeHead(502);
        response.end();
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('close', () => void pool.close());
  return server;
}

/** (BENCH_MCP) a remote MCP server: one tool, get_item, answering the upstream's item as structured content. */
export function createMcpUpstream(): Server {
  const item = JSON.parse(UPSTREAM_BODY) as Record<string, unknown>;
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-mcp', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler('tools/list', () => ({
      tools: [
        {
          name: 'get_item',
          description: 'Get an item',
          inputSchema: { type: 'object' as const, properties: { q: { type: 'string' } }, required: ['q'] },
        },
      ],
    }));
    server.setRequestHandler('tools/call', () => ({
      content: [{ type: 'text' as const, text: UPSTREAM_BODY }],
      structuredContent: item,
    }));
    return server;
  });
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(request.headers)) {
          if (typeof value === 'string') {
            headers.set(name, value);
          }
        }
        const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
        const answer = await handler.fetch(
          new Request(`http://127.0.0.1${request.url ?? '/'}`, {
            method: request.method,
            headers,
            body: hasBody ? Buffer.concat(chunks) : undefined,
          }),
        );
        const body = Buffer.from(await answer.arrayBuffer());
        response.writeHead(answer.status, Object.fromEntries(answer.headers));
        response.end(body);
      })().catch(() => {
        response.writeHead(500);
        response.end();
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  return server;
}

/** Serves `server` on a loopback port of its own and tells the parent process which. */
async function runRole(server: Server): Promise<void> {
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
  await new Promise(() => undefined);
}

// ---------------------------------------------------------------- orchestration

export function forkRole(
  role: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(SELF, [role], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve({ child, port: message.port }));
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
}

export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Migrates a fresh embedded database and writes a project, an app, a function, a configuration and an account;
 * with `mcpServerUrl`, the same for an app of that remote MCP server (no_auth).
 */
export async function seed(env: Record<string, string>, upstreamUrl: string, mcpServerUrl?: string): Promise<string> {
  const config = loadConfig(env);
  const db = config.embedded
    ? await EmbeddedDatabase.open({ dataDir: config.DATA_DIR, maxConnections: 4, holder: 'bench seed' })
    : undefined;
  const dataSource = new DataSource(databaseOptions(config, db, ENTITIES));
  try {
    await dataSource.initialize();
    await dataSource.runMigrations();
    const repository = new ProjectsRepository(dataSource);
    const changes = new ChangeNotifications(dataSource, config);
    const { project_id: projectId, api_key: apiKey } = await new ProjectsService(
      repository,
      new HeaderApiKeyStrategy(repository, new KnownKeys(repository, changes), config),
      new AuditService(new AuditRepository(dataSource)),
      changes,
    ).createProject(CLI_ACTOR, 'bench');
    const box = new SecretBox(SecretBox.parseKey(env.SECRETS_KEY) as Buffer);
    await dataSource.getRepository(AppEntity).insert({
      name: 'BENCH',
      display_name: 'Bench',
      provider: 'bench',
      version: '1',
      description: 'Benchmark upstream',
      logo: '',
      categories: [],
      visibility: 'public',
      active: true,
      security_schemes: { api_key: { location: 'header', name: 'X-Api-Key' } },
      secrets: null,
      content_hash: 'bench',
    });
    await dataSource.getRepository(FunctionEntity).insert({
      name: FUNCTION_NAME,
      app_name: 'BENCH',
      description: 'Get an item',
      tags: [],
      visibility: 'public',
      active: true,
      protocol: 'rest',
      protocol_data: { method: 'GET', path: '/items', server_url: upstreamUrl },
      parameters: {
        type: 'object',
        properties: {
          query: {
            type: 'object',
            properties: { q: { type: 'string' } },
            required: ['q'],
            visible: ['q'],
            additionalProperties: false,
          },
        },
        required: ['query'],
        visible: ['query'],
        additionalProperties: false,
      },
      response: {},
      content_hash: 'bench',
    });
    await dataSource.getRepository(AppConfigurationEntity).insert({
      id: crypto.randomUUID(),
      project_id: projectId,
      app_name: 'BENCH',
      security_scheme: 'api_key',
      security_scheme_overrides: {},
      secrets: null,
      enabled: true,
      all_functions_enabled: true,
      enabled_functions: [],
    });
    await dataSource.getRepository(LinkedAccountEntity).insert({
      id: crypto.randomUUID(),
      project_id: projectId,
      app_name: 'BENCH',
      linked_account_owner_id: OWNER,
      security_scheme: 'api_key',
      credentials: sealedForEveryBuild(box, { api_key: 'bench-upstream-key' }),
      enabled: true,
    });
    if (mcpServerUrl) {
      await seedMcpApp(dataSource, box, projectId, mcpServerUrl);
    }
    return apiKey;
  } finally {
    if (dataSource.isInitialized) {
      await dataSource.destroy();
    }
    await db?.close();
  }
}

/** The app of a remote MCP server as `catalog add-mcp` writes it, configured by the project, `OWNER` linked. */
async function seedMcpApp(dataSource: DataSource, box: SecretBox, projectId: string, serverUrl: string): Promise<void> {
  await dataSource.getRepository(AppEntity).insert({
    name: 'BENCH_MCP',
    display_name: 'Bench MCP',
    provider: 'bench-mcp',
    version: '1',
    description: 'Benchmark remote MCP server',
    logo: '',
    categories: [],
    visibility: 'public',
    active: true,
    security_schemes: { no_auth: {} },
    secrets: null,
    content_hash: 'bench',
  });
  await dataSource.getRepository(FunctionEntity).insert({
    name: MCP_FUNCTION_NAME,
    app_name: 'BENCH_MCP',
    description: 'Get an item',
    tags: [],
    visibility: 'public',
    active: true,
    protocol: 'mcp',
    protocol_data: { server_url: serverUrl, tool: 'get_item' },
    parameters: {
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
      visible: ['q'],
      additionalProperties: false,
    },
    response: {},
    content_hash: 'bench',
  });
  await dataSource.getRepository(AppConfigurationEntity).insert({
    id: crypto.randomUUID(),
    project_id: projectId,
    app_name: 'BENCH_MCP',
    security_scheme: 'no_auth',
    security_scheme_overrides: {},
    secrets: null,
    enabled: true,
    all_functions_enabled: true,
    enabled_functions: [],
  });
  await dataSource.getRepository(LinkedAccountEntity).insert({
    id: crypto.randomUUID(),
    project_id: projectId,
    app_name: 'BENCH_MCP',
    linked_account_owner_id: OWNER,
    security_scheme: 'no_auth',
    credentials: box.sealJson({}),
    enabled: true,
  });
}

/**
 * Seals in the form builds from before the key ring read (`v1.<payload>`, no key id; the payload is the same
 * as in `v2.<key id>.<payload>`, and every later build still opens it), so that BENCH_COMPARE_DIST can name
 * an older build.
 */
function sealedForEveryBuild(box: SecretBox, value: unknown): string {
  const [, , payload] = box.sealJson(value).split('.');
  return `v1.${payload}`;
}

/** `dist`: the built dist/ folder to serve from; this checkout's by default. */
export async function startService(env: Record<string, string>, dist = join(SELF, '..', '..')): Promise<ChildProcess> {
  const entry = join(dist, 'src', 'main.js');
  // BENCH_PROFILE_DIR: write a CPU profile of the service there (read it in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE_DIR
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]
    : [];
  const child = spawn(process.execPath, [...profile, entry, 'serve'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Patchbay listening')) {
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}: ${output}`)));
  });
  return child;
}

export interface Target {
  label: string;
  /** The process that serves the path: its CPU time per request is reported. */
  pid?: number;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** utime + stime of a process (or with `thread`, of its main thread only), in ms. */
function cpuTimeMs(pid: number | undefined, thread = false): number {
  try {
    const path = thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`;
    const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

const CLOCK_TICKS = 100;

/** `overallRate`: requests per second across all connections (a fixed, moderate load); unbounded when absent. */
export function measure(target: Target, connections: number, seconds: number, overallRate?: number): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const cpuBefore = cpuTimeMs(target.pid);
    const mainBefore = cpuTimeMs(target.pid, true);
    const instance = autocannon(
      {
        url: target.url,
        method: target.method,
        headers: target.headers,
        body: target.body,
        connections,
        pipelining: 1,
        duration: seconds,
        ...(overallRate === undefined ? {} : { overallRate }),
      },
      (error, result) => {
        if (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        resolve({
          cpuMs: cpuTimeMs(target.pid) - cpuBefore,
          mainThreadCpuMs: cpuTimeMs(target.pid, true) - mainBefore,
          requests: result.requests.total,
          seconds: result.duration,
          latencies,
          errors: result.errors + result.timeouts + result.non2xx,
        });
      },
    );
    // The tracker passes the client first (the published types omit it); the time is in fractional ms.
    (instance as NodeJS.EventEmitter).on(
      'response',
      (_client: unknown, _status: number, _bytes: number, time: number) => {
        latencies.push(time);
      },
    );
  });
}

export function figures(samples: Sample[]): Figures {
  const latencies = samples.flatMap((s) => s.latencies).sort((x, y) => x - y);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  const requests = samples.reduce((sum, s) => sum + s.requests, 0);
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0);
  const cpuMs = samples.reduce((sum, s) => sum + s.cpuMs, 0);
  const mainMs = samples.reduce((sum, s) => sum + s.mainThreadCpuMs, 0);
  return {
    server_cpu_us_per_request: Math.round((cpuMs * 1000) / requests),
    main_thread_cpu_us_per_request: Math.round((mainMs * 1000) / requests),
    median_ms: round(at(0.5)),
    p99_ms: round(at(0.99)),
    req_per_s: Math.round(requests / seconds),
    errors: samples.reduce((sum, s) => sum + s.errors, 0),
  };
}

export const round = (value: number) => Math.round(value * 1000) / 1000;

/**
 * The throughput of a path over the bare proxy's, round by round (the two measured within the same round, a few
 * seconds apart): the median and the range over the rounds. The pooled ratio divides totals over all rounds, and
 * this machine's speed can move twofold between rounds; a ratio taken within each round is less exposed to it.
 */
export function pairedRatios(path: Sample[], bare: Sample[]): { median: number; min: number; max: number } | null {
  // BENCH_ONLY can leave out the bare proxy (or the path): then there is nothing to pair.
  if (path.length === 0 || path.length !== bare.length) {
    return null;
  }
  const ratios = path
    .map((sample, index) => sample.requests / sample.seconds / (bare[index].requests / bare[index].seconds))
    .sort((x, y) => x - y);
  const middle = ratios.length / 2;
  const median = ratios.length % 2 === 1 ? ratios[Math.floor(middle)] : (ratios[middle - 1] + ratios[middle]) / 2;
  return { median: round(median), min: round(ratios[0]), max: round(ratios[ratios.length - 1]) };
}

/** (BENCH_MCP) Calls `call` one at a time for `seconds`, each call's latency kept; `pid` is the serving process's. */
async function sequential(call: () => Promise<void>, seconds: number, pid?: number): Promise<Sample> {
  const latencies: number[] = [];
  const cpuBefore = cpuTimeMs(pid);
  const mainBefore = cpuTimeMs(pid, true);
  const started = performance.now();
  const until = started + seconds * 1000;
  let errors = 0;
  while (performance.now() < until) {
    const before = performance.now();
    try {
      await call();
      latencies.push(performance.now() - before);
    } catch {
      errors += 1;
    }
  }
  return {
    cpuMs: cpuTimeMs(pid) - cpuBefore,
    mainThreadCpuMs: cpuTimeMs(pid, true) - mainBefore,
    requests: latencies.length,
    seconds: (performance.now() - started) / 1000,
    latencies,
    errors,
  };
}

/**
 * (BENCH_MCP) The remote-MCP path against its baseline, in alternating rounds at concurrency 1: (m) the
 * function through Patchbay, (s) the tool on the server directly with the official v2 client SDK, and the
 * same function through each compared build (BENCH_COMPARE_DIST, BENCH_VARIANT_ENV), each round in a
 * rotated order.
 */
async function measureMcp(options: {
  mcpServerUrl: string;
  servicePort: number;
  servicePid: number | undefined;
  upstreamPid: number | undefined;
  compares: { label: string; port: number; pid: number | undefined; kind: string }[];
  apiKey: string;
  rounds: number;
  seconds: number;
}): Promise<Record<string, unknown>> {
  const client = new McpClient({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(options.mcpServerUrl)));
  const body = JSON.stringify({ function_input: MCP_ARGUMENTS, linked_account_owner_id: OWNER });
  const direct = async () => {
    const result = await client.callTool({ name: 'get_item', arguments: MCP_ARGUMENTS });
    if (result.isError || result.structuredContent === undefined) {
      throw new Error('the tool failed');
    }
  };
  const pools: Pool[] = [];
  const throughService = (port: number) => {
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 1, keepAliveTimeout: 60_000 });
    pools.push(pool);
    return async () => {
      const answer = await pool.request({
        method: 'POST',
        path: `/v1/functions/${MCP_FUNCTION_NAME}/execute`,
        headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey },
        body,
      });
      const result = (await answer.body.json()) as { success?: boolean; error?: string };
      if (!result.success) {
        throw new Error(`the service did not execute the function: ${result.error}`);
      }
    };
  };
  const paths: { key: string; call: () => Promise<void>; pid: number | undefined }[] = [
    { key: 's_direct_sdk_client', call: direct, pid: options.upstreamPid },
    { key: 'm_patchbay', call: throughService(options.servicePort), pid: options.servicePid },
    ...options.compares.map((compare) => ({
      key: `${compare.label}_${compare.kind}`,
      call: throughService(compare.port),
      pid: compare.pid,
    })),
  ];
  try {
    for (const path of paths.slice(1)) {
      await path.call(); // fails loudly here rather than as errors in the figures
    }
    for (let warm = 0; warm < 300; warm += 1) {
      for (const path of paths) {
        await path.call();
      }
    }
    const samples: Record<string, Sample[]> = {};
    for (let round = 0; round < options.rounds; round += 1) {
      const order = paths.map((_, index) => paths[(index + round) % paths.length]);
      for (const path of order) {
        (samples[path.key] ??= []).push(await sequential(path.call, options.seconds, path.pid));
      }
    }
    const byPath = Object.fromEntries(paths.map((path) => [path.key, figures(samples[path.key])]));
    const s = byPath.s_direct_sdk_client;
    const added = round(byPath.m_patchbay.median_ms - s.median_ms);
    return {
      concurrency_1: byPath,
      added_median_ms_at_1: added,
      added_median_ms_at_1_target: '<= 1',
      added_median_met: added <= 1,
      ...(options.compares.length > 0
        ? {
            compared_added_median_ms_at_1: Object.fromEntries(
              paths.slice(2).map((path) => [path.key, round(byPath[path.key].median_ms - s.median_ms)]),
            ),
          }
        : {}),
    };
  } finally {
    await client.close();
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

/** A request budget no bench run reaches (PostgreSQL's default, 600 a minute, would answer 429 within a second). */
const UNREACHED_REQUEST_BUDGET = '1000000000';

/** A fresh database on the PostgreSQL server of `server` for each service, cloned from one seeded template. */
class ServerDatabases {
  private readonly names: string[] = [];
  private constructor(
    private readonly server: string,
    private readonly admin: pg.Client,
    private readonly prefix: string,
  ) {}

  static async connect(server: string): Promise<ServerDatabases> {
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    return new ServerDatabases(server, admin, `patchbay_bench_${randomBytes(4).toString('hex')}`);
  }

  /** A new database's URL; `template` names a database created before (the seeded one) to copy. */
  async create(suffix: string, template?: string): Promise<string> {
    const name = `${this.prefix}_${suffix}`;
    await this.admin.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${this.prefix}_${template}"` : ''}`);
    this.names.push(name);
    const url = new URL(this.server);
    url.pathname = `/${name}`;
    return url.toString();
  }

  async dropAll(): Promise<void> {
    for (const name of this.names.reverse()) {
      await this.admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
    await this.admin.end();
  }
}

const LABELS = 'defghijklmnopqrstuvwxyz';

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION_S ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const levels = (process.env.BENCH_CONCURRENCY ?? '1,64').split(',').map(Number);
  const server = process.env.DATABASE_URL;
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-'));
  const dataDirs = [dataDir];
  const children: ChildProcess[] = [];
  const databases = server ? await ServerDatabases.connect(server) : undefined;
  const withMcp = process.env.BENCH_MCP === '1';
  try {
    const mcpUpstream = withMcp ? await forkRole('mcp-upstream') : undefined;
    if (mcpUpstream) {
      children.push(mcpUpstream.child);
    }
    const mcpServerUrl = mcpUpstream ? `http://127.0.0.1:${mcpUpstream.port}/mcp` : undefined;
    const upstream = await forkRole('upstream');
    children.push(upstream.child);
    const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
    const proxy = await forkRole('proxy', { BENCH_UPSTREAM_URL: upstreamUrl });
    children.push(proxy.child);

    const port = await freePort();
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      PORT: String(port),
      // The MCP server of BENCH_MCP is on 127.0.0.1.
      ...(withMcp ? { MCP_SERVERS_ALLOW_PRIVATE_NETWORKS: 'true' } : {}),
    };
    if (databases) {
      env.DATABASE_URL = await databases.create('seed');
      env.RATE_LIMIT_REQUESTS = UNREACHED_REQUEST_BUDGET;
    }
    const apiKey = await seed(env, upstreamUrl, mcpServerUrl);
    /** Each service's own copy of the seeded data. */
    const copy = async (suffix: string): Promise<Record<string, string>> => {
      if (databases) {
        return { DATABASE_URL: await databases.create(suffix, 'seed') };
      }
      const copied = `${dataDir}-${suffix}`;
      cpSync(dataDir, copied, { recursive: true });
      dataDirs.push(copied);
      return { DATA_DIR: copied };
    };
    const compareDists = (process.env.BENCH_COMPARE_DIST ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    const compares: { label: string; dist: string; port: number; service: ChildProcess; kind: string }[] = [];
    for (const [index, dist] of compareDists.entries()) {
      const label = LABELS[index];
      const comparePort = await freePort();
      const service = await startService(
        { ...env, ...(await copy(label)), PORT: String(comparePort) },
        resolvePath(dist),
      );
      children.push(service);
      compares.push({ label, dist, port: comparePort, service, kind: 'compare' });
    }
    // BENCH_VARIANT_ENV='{"METRICS_PORT":"0"}': this build with these settings added, from its own copy of the
    // seeded data (e.g. metrics or traces on against off).
    if (process.env.BENCH_VARIANT_ENV) {
      const variantEnv = JSON.parse(process.env.BENCH_VARIANT_ENV) as Record<string, string>;
      const label = LABELS[compares.length];
      const variantPort = await freePort();
      const service = await startService({ ...env, ...(await copy(label)), ...variantEnv, PORT: String(variantPort) });
      children.push(service);
      compares.push({ label, dist: 'this build + BENCH_VARIANT_ENV', port: variantPort, service, kind: 'variant' });
    }

    const service = await startService({ ...env, ...(await copy('c')) });
    children.push(service);

    const execute = (label: string, pid: number | undefined, servicePort: number): Target => ({
      label,
      pid,
      url: `http://127.0.0.1:${servicePort}/v1/functions/${FUNCTION_NAME}/execute`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: EXECUTE_BODY,
    });
    const targets: Target[] = [
      { label: 'a', pid: upstream.child.pid, url: `${upstreamUrl}/items?q=bench`, method: 'GET' },
      {
        label: 'b',
        pid: proxy.child.pid,
        url: `http://127.0.0.1:${proxy.port}/execute`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: EXECUTE_BODY,
      },
      execute('c', service.pid, port),
      ...compares.map((compare) => execute(compare.label, compare.service.pid, compare.port)),
    ];
    for (const target of targets.slice(2)) {
      const check = await fetch(target.url, { method: 'POST', headers: target.headers, body: EXECUTE_BODY });
      const checked = (await check.json()) as { success?: boolean };
      if (!checked.success) {
        throw new Error(`the service (${target.label}) did not execute the function: ${JSON.stringify(checked)}`);
      }
    }

    // BENCH_ONLY=c (or a, b): measure one path only, e.g. while profiling.
    const only = process.env.BENCH_ONLY;
    const measured = only ? targets.filter((target) => only.includes(target.label)) : targets;
    const mcpOnly = withMcp && measured.length === 0;
    for (const target of measured) {
      await measure(target, 8, 2); // warm-up: JIT, connection pools, caches
    }
    const samples: Record<string, Sample[]> = {};
    for (let round = 0; round < (mcpOnly ? 0 : rounds); round += 1) {
      for (const connections of levels) {
        // Each round in a rotated order, so that no path always follows the same one.
        const order = measured.map((_, index) => measured[(index + round) % measured.length]);
        for (const target of order) {
          const key = `${target.label}@${connections}`;
          const sample = await measure(target, connections, seconds);
          (samples[key] ??= []).push(sample);
          if (process.env.BENCH_VERBOSE) {
            const cpu = Math.round((sample.cpuMs * 1000) / sample.requests);
            const main = Math.round((sample.mainThreadCpuMs * 1000) / sample.requests);
            process.stderr.write(
              `round ${round + 1} ${key}: ${Math.round(sample.requests / sample.seconds)} req/s, ` +
                `${cpu} µs CPU/request (main thread ${main})\n`,
            );
          }
        }
      }
    }
    const mcp = mcpServerUrl
      ? await measureMcp({
          mcpServerUrl,
          servicePort: port,
          servicePid: service.pid,
          upstreamPid: mcpUpstream?.child.pid,
          compares: compares.map((compare) => ({
            label: compare.label,
            port: compare.port,
            pid: compare.service.pid,
            kind: compare.kind,
          })),
          apiKey,
          rounds,
          seconds,
        })
      : undefined;
    if (mcpOnly && mcp) {
      process.stdout.write(
        `${JSON.stringify({ benchmark: 'execute', mcp, summary: { mcp: mcpSummary(mcp) } }, null, 2)}\n`,
      );
      return;
    }
    const at = (connections: number) => ({
      a_direct: figures(samples[`a@${connections}`] ?? []),
      b_bare_proxy: figures(samples[`b@${connections}`] ?? []),
      c_patchbay: figures(samples[`c@${connections}`] ?? []),
      ...Object.fromEntries(
        compares.map((compare) => [
          `${compare.label}_${compare.kind}`,
          figures(samples[`${compare.label}@${connections}`] ?? []),
        ]),
      ),
    });
    const byLevel = Object.fromEntries(levels.map((level) => [`concurrency_${level}`, at(level)]));
    const low = at(Math.min(...levels));
    const high = at(Math.max(...levels));
    const ratioAt = (figure: Figures) => Math.round((figure.req_per_s / high.b_bare_proxy.req_per_s) * 1000) / 1000;
    const highest = Math.max(...levels);
    const paired = (label: string) => pairedRatios(samples[`${label}@${highest}`] ?? [], samples[`b@${highest}`] ?? []);
    const summaryOf = (label: string, build: string, kind = 'compare') => {
      const key = label === 'c' ? 'c_patchbay' : `${label}_${kind}`;
      const lowFigure = (low as Record<string, Figures>)[key];
      const highFigure = (high as Record<string, Figures>)[key];
      return {
        build,
        [`throughput_ratio_to_bare_proxy_at_${Math.max(...levels)}`]: ratioAt(highFigure),
        [`throughput_ratio_per_round_at_${highest}`]: paired(label),
        [`added_median_ms_at_${Math.min(...levels)}`]: round(lowFigure.median_ms - low.a_direct.median_ms),
        [`server_cpu_us_per_request_at_${Math.max(...levels)}`]: highFigure.server_cpu_us_per_request,
        [`main_thread_cpu_us_per_request_at_${Math.max(...levels)}`]: highFigure.main_thread_cpu_us_per_request,
        [`server_cpu_us_per_request_at_${Math.min(...levels)}`]: lowFigure.server_cpu_us_per_request,
        cpu_per_request_over_bare_proxy: round(
          highFigure.server_cpu_us_per_request / high.b_bare_proxy.server_cpu_us_per_request,
        ),
      };
    };
    const addedMedian = round(low.c_patchbay.median_ms - low.a_direct.median_ms);
    const ratio = ratioAt(high.c_patchbay);
    const report = {
      benchmark: 'execute',
      database: server ? 'postgresql' : 'embedded',
      node: process.version,
      cpus: cpus().length,
      duration_s_per_round: seconds,
      rounds,
      ...byLevel,
      targets: {
        added_median_ms_at_1: addedMedian,
        added_median_ms_at_1_target: '<= 0.30',
        added_median_met: addedMedian <= 0.3,
        throughput_ratio_c_over_b_at_64: ratio,
        throughput_ratio_target: '>= 0.6',
        throughput_ratio_met: ratio >= 0.6,
      },
      summary: {
        b: { build: 'bare proxy', server_cpu_us_per_request: high.b_bare_proxy.server_cpu_us_per_request },
        c: summaryOf('c', 'this checkout'),
        ...Object.fromEntries(
          compares.map((compare) => [compare.label, summaryOf(compare.label, compare.dist, compare.kind)]),
        ),
        ...(mcp ? { mcp: mcpSummary(mcp) } : {}),
      },
      ...(mcp ? { mcp } : {}),
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
    await databases?.dropAll();
  }
}

function mcpSummary(mcp: Record<string, unknown>) {
  return {
    path: 'remote MCP server through Patchbay, over the v2 SDK client directly',
    added_median_ms_at_1: mcp.added_median_ms_at_1,
    ...(mcp.compared_added_median_ms_at_1 ? { compared: mcp.compared_added_median_ms_at_1 } : {}),
  };
}

// Run only as the script (or one of its child roles); bench/mcp.ts imports the helpers above.
if (process.argv[1] === SELF) {
  const role = process.argv[2];
  if (role === 'upstream') {
    await runRole(createUpstream());
  } else if (role === 'mcp-upstream') {
    await runRole(createMcpUpstream());
  } else if (role === 'proxy') {
    await runRole(createProxy(process.env.BENCH_UPSTREAM_URL as string));
  } else {
    await main();
  }
}
