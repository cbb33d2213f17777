/**
 * `npm run bench:mcp`: what MCP adds to a function execution. The same function (GET on a trivial
 * local JSON upstream, api_key scheme) run by the same service three ways, in alternating rounds at
 * concurrency 1 and 32:
 *   (r) rest:   POST /v1/functions/{name}/execute;
 *   (m) mcp:    POST /v1/mcp, a stateless tools/call of execute_function in protocol 2025-11-25;
 *   (n) modern: POST /v1/mcp, the same tools/call in protocol 2026-07-28 (per-request envelope and
 *               the Mcp-Method/Mcp-Name headers);
 *   (o) oauth:  POST /v1/mcp/p/{project}, the 2025-11-25 tools/call with an OAuth access token, obtained
 *               in the set-up through the real flow (bench/mcp-oauth-sign-in.ts: the project's identity
 *               provider on 127.0.0.1, registration, authorization code with PKCE, consent).
 * All answer JSON. Prints one JSON object with the median, p99 and server CPU per request of each and
 * the median each adds at concurrency 1 (target: under 0.5 ms). BENCH_DURATION_S (default
 * 5) and BENCH_ROUNDS (default 3) tune it.
 * BENCH_COMPARE_DIST=<the dist/ folder of another checkout, built> adds (R, M, N): r, m and n on that build,
 * served from its own copy of the seeded data, in the same alternating rounds; `compare` in the report has
 * their figures. BENCH_ONLY (e.g. "nN") measures only those paths.
 */
import { type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import {
  EXECUTE_BODY,
  figures,
  forkRole,
  freePort,
  FUNCTION_NAME,
  measure,
  OWNER,
  round,
  type Sample,
  seed,
  startService,
  type Target,
} from './execute.js';
import { mcpOAuthToken, type McpOAuthToken } from './mcp-oauth-sign-in.js';

const TOOLS_CALL_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'execute_function',
    arguments: { function_name: FUNCTION_NAME, function_input: { query: { q: 'bench' } } },
  },
});
const MODERN_TOOLS_CALL_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'execute_function',
    arguments: { function_name: FUNCTION_NAME, function_input: { query: { q: 'bench' } } },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const CONCURRENCIES = [1, 32];

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION_S ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-mcp-'));
  const children: ChildProcess[] = [];
  const compareDirs: string[] = [];
  let oauth: McpOAuthToken | undefined;
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
    const compareDist = process.env.BENCH_COMPARE_DIST;
    let compare: { port: number; service: ChildProcess } | undefined;
    if (compareDist) {
      const copied = `${dataDir}-compare`;
      cpSync(dataDir, copied, { recursive: true });
      compareDirs.push(copied);
      const comparePort = await freePort();
      const compareService = await startService(
        { ...env, DATA_DIR: copied, PORT: String(comparePort) },
        resolvePath(compareDist),
      );
      children.push(compareService);
      compare = { port: comparePort, service: compareService };
    }
    const service = await startService(env);
    children.push(service);
    const base = `http://127.0.0.1:${port}`;
    // The user signed in through the project's identity provider is the bench's end user.
    oauth = await mcpOAuthToken(base, apiKey, OWNER);
    const paths = (labels: { r: string; m: string; n: string }, pid: number | undefined, base: string): Target[] => [
      {
        label: labels.r,
        pid,
        url: `${base}/v1/functions/${FUNCTION_NAME}/execute`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: EXECUTE_BODY,
      },
      {
        label: labels.m,
        pid,
        url: `${base}/v1/mcp`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'x-api-key': apiKey,
          'x-linked-account-owner-id': OWNER,
        },
        body: TOOLS_CALL_BODY,
      },
      {
        label: labels.n,
        pid,
        url: `${base}/v1/mcp`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'execute_function',
          'x-api-key': apiKey,
          'x-linked-account-owner-id': OWNER,
        },
        body: MODERN_TOOLS_CALL_BODY,
      },
    ];
    const all: Target[] = [
      ...paths({ r: 'r', m: 'm', n: 'n' }, service.pid, base),
      {
        label: 'o',
        pid: service.pid,
        url: oauth.mcpUrl,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          authorization: `Bearer ${oauth.accessToken}`,
        },
        body: TOOLS_CALL_BODY,
      },
      ...(compare ? paths({ r: 'R', m: 'M', n: 'N' }, compare.service.pid, `http://127.0.0.1:${compare.port}`) : []),
    ];
    const only = process.env.BENCH_ONLY;
    const targets = only ? all.filter((target) => only.includes(target.label)) : all;
    for (const target of targets.filter((target) => target.label.toLowerCase() !== 'r')) {
      const check = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
      const checked = (await check.json()) as { result?: { structuredContent?: { success?: boolean } } };
      if (!checked.result?.structuredContent?.success) {
        throw new Error(`MCP (${target.label}) did not execute the function: ${JSON.stringify(checked)}`);
      }
    }
    for (const target of targets) {
      await measure(target, 8, 2); // warm-up
    }
    const samples: Record<string, Sample[]> = {};
    for (let index = 0; index < rounds; index += 1) {
      for (const connections of CONCURRENCIES) {
        // Each round in a rotated order, so that no path always follows the same one.
        const order = targets.map((_, at) => targets[(at + index) % targets.length]);
        for (const target of order) {
          (samples[`${target.label}@${connections}`] ??= []).push(await measure(target, connections, seconds));
        }
      }
    }
    const at = (connections: number) => ({
      rest_execute: figures(samples[`r@${connections}`] ?? []),
      mcp_tools_call_2025_11_25: figures(samples[`m@${connections}`] ?? []),
      mcp_tools_call_2026_07_28: figures(samples[`n@${connections}`] ?? []),
      mcp_tools_call_oauth_token: figures(samples[`o@${connections}`] ?? []),
    });
    const compared = (connections: number) => ({
      rest_execute: figures(samples[`R@${connections}`] ?? []),
      mcp_tools_call_2025_11_25: figures(samples[`M@${connections}`] ?? []),
      mcp_tools_call_2026_07_28: figures(samples[`N@${connections}`] ?? []),
    });
    const c1 = at(1);
    const added = round(c1.mcp_tools_call_2025_11_25.median_ms - c1.rest_execute.median_ms);
    const addedModern = round(c1.mcp_tools_call_2026_07_28.median_ms - c1.rest_execute.median_ms);
    const addedOAuth = round(c1.mcp_tools_call_oauth_token.median_ms - c1.rest_execute.median_ms);
    const report = {
      benchmark: 'mcp',
      node: process.version,
      cpus: cpus().length,
      duration_s_per_round: seconds,
      rounds,
      concurrency_1: c1,
      concurrency_32: at(32),
      targets: {
        added_median_ms_at_1_target: '< 0.5',
        added_median_ms_at_1_2025_11_25: added,
        added_median_met_2025_11_25: added < 0.5,
        added_median_ms_at_1_2026_07_28: addedModern,
        added_median_met_2026_07_28: addedModern < 0.5,
        added_median_ms_at_1_oauth_token: addedOAuth,
        added_median_met_oauth_token: addedOAuth < 0.5,
      },
      ...(compare ? { compare: { build: compareDist, concurrency_1: compared(1), concurrency_32: compared(32) } } : {}),
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await oauth?.close();
    // The service holds DATA_DIR until it exits: remove the folder only then.
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
    for (const dir of [dataDir, ...compareDirs]) {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

await main();
