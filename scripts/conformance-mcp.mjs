// `npm run conformance:mcp`: the official MCP conformance suite (@modelcontextprotocol/conformance, pinned
// in package.json) against /v1/mcp of a freshly started service (embedded database in a temporary DATA_DIR,
// a project and API key made with the CLI). Prints one line per server scenario and a last line
// "conformance: N passed, N failed"; exits 1 when a scenario that applies to Patchbay fails.
//
// The suite's client cannot send headers, and Patchbay answers 401 without credentials and takes none
// in the URL (a credential in a URL ends up in logs and histories). So the suite talks to a small
// local proxy that adds X-API-KEY and the end user, as an IDE client configured with a remote URL and
// a header does. The proxy passes Host and Origin through untouched, and the service's
// PUBLIC_BASE_URL is the proxy's address, as behind any reverse proxy.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist/src/main.js');
const suite = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const OWNER = 'conformance-user';

/** Server scenarios that test what Patchbay does not offer, with the reason (listed in docs/mcp.md too). */
const NOT_APPLICABLE = {
  'completion-complete': 'no prompts or resource templates, so no completion',
  'logging-set-level': 'no logging capability',
  'prompts-get-embedded-resource': 'no prompts',
  'prompts-get-simple': 'no prompts',
  'prompts-get-with-args': 'no prompts',
  'prompts-get-with-image': 'no prompts',
  'prompts-list': 'no prompts',
  'resources-list': 'no resources',
  'resources-read-binary': 'no resources',
  'resources-read-text': 'no resources',
  'resources-subscribe': 'no resources',
  'resources-templates-read': 'no resources',
  'resources-unsubscribe': 'no resources',
  'server-sse-polling': 'calls a test tool by name (test_reconnection) and needs SSE resumability (an event store)',
  'elicitation-sep1034-defaults':
    'calls a test tool by name (test_elicitation_sep1034_defaults) that Patchbay does not have',
  'elicitation-sep1330-enums': 'calls a test tool by name (test_elicitation_sep1330_enums) that Patchbay does not have',
  'json-schema-2020-12': 'expects a test tool by name (json_schema_2020_12_tool) that Patchbay does not have',
  'tools-call-audio': 'calls a test tool by name (test_audio_content); Patchbay tools are catalogue functions',
  'tools-call-elicitation': 'calls a test tool by name (test_elicitation) that asks for form elicitation',
  'tools-call-embedded-resource': 'calls a test tool by name (test_embedded_resource)',
  'tools-call-error': 'calls a test tool by name (test_error_handling)',
  'tools-call-image': 'calls a test tool by name (test_image_content)',
  'tools-call-mixed-content': 'calls a test tool by name (test_multiple_content_types)',
  'tools-call-sampling': 'calls a test tool by name (test_sampling); Patchbay does not use sampling',
  'tools-call-simple-text': 'calls a test tool by name (test_simple_text)',
  'tools-call-with-logging': 'calls a test tool by name (test_tool_with_logging)',
  'tools-call-with-progress': 'calls a test tool by name (test_tool_with_progress)',
};

/** The scenarios that apply and passed when this was written: each must report, so a crash cannot hide one. */
const EXPECTED = ['dns-rebinding-protection', 'ping', 'server-initialize', 'server-sse-multiple-streams', 'tools-list'];

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

function cli(args, env) {
  return execFileSync(process.execPath, [main, ...args], { env, cwd: root, encoding: 'utf8' });
}

async function waitForHealth(url, child) {
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) {
      throw new Error(`the service exited with ${child.exitCode}`);
    }
    try {
      const res = await fetch(`${url}/v1/health`);
      if (res.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the service did not answer /v1/health within 60 s');
}

/** Forwards every request to `target` with the credentials added; bodies and streams are piped as they come. */
function startProxy(target, port, apiKey) {
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: target,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, 'x-api-key': apiKey, 'x-linked-account-owner-id': OWNER },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) {
        res.writeHead(502);
      }
      res.end();
    });
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  return new Promise((resolveServer) => server.listen(port, '127.0.0.1', () => resolveServer(server)));
}

/** The checks of each scenario the suite wrote under results/ (one folder per scenario). */
function readResults(dir) {
  const results = new Map();
  const base = join(dir, 'results');
  for (const entry of existsSync(base) ? readdirSync(base) : []) {
    const file = join(base, entry, 'checks.json');
    const match = /^(?:server-)?(.+?)-\d{4}-\d\d-\d\dT.+$/.exec(entry);
    if (!match || !existsSync(file)) {
      continue;
    }
    results.set(match[1], JSON.parse(readFileSync(file, 'utf8')));
  }
  return results;
}

async function main_() {
  execFileSync(process.execPath, [join(root, 'scripts/build-if-needed.mjs')], { cwd: root, stdio: 'inherit' });
  // The suite writes results/ into its working directory: a temporary one, never the repository.
  const work = mkdtempSync(join(tmpdir(), 'patchbay-conformance-'));
  const [servicePort, proxyPort] = [await freePort(), await freePort()];
  const env = { ...process.env, DATA_DIR: join(work, 'data'), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.SECRETS_KEY;
  env.PUBLIC_BASE_URL = `http://127.0.0.1:${proxyPort}`;
  let service;
  let proxy;
  try {
    cli(['migrate'], env);
    const { api_key: apiKey } = JSON.parse(cli(['projects', 'create', '--name', 'conformance', '--json'], env));
    service = spawn(process.execPath, [main, 'serve', '--port', String(servicePort)], {
      env,
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitForHealth(`http://127.0.0.1:${servicePort}`, service);
    proxy = await startProxy(servicePort, proxyPort, apiKey);

    const url = `http://127.0.0.1:${proxyPort}/v1/mcp`;
    console.log(`Conformance suite ${suiteVersion()} against ${url} (through the credential proxy)`);
    // Node 20 lacks fs.globSync, which the suite imports (only its tier-check command calls it).
    const preload = join(root, 'scripts/conformance-fs-shim.mjs');
    // Every server scenario (pending ones included), or those named after --scenario on this script's command line.
    const args = ['server', '--url', url, '--suite', 'all', '--output-dir', join(work, 'results')];
    const run = spawn(process.execPath, ['--import', preload, suite, ...args, ...process.argv.slice(2)], {
      cwd: work,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    run.stdout.on('data', (chunk) => (output += chunk));
    run.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise((r) => run.on('close', r));
    const results = readResults(work);
    if (results.size === 0) {
      console.log(output);
      throw new Error(`the suite wrote no results (exit ${code})`);
    }

    let passed = 0;
    let failed = 0;
    for (const [scenario, checks] of [...results].sort(([a], [b]) => a.localeCompare(b))) {
      const failures = checks.filter((check) => check.status === 'FAILURE');
      const counts = ['SUCCESS', 'WARNING', 'FAILURE']
        .map((status) => `${checks.filter((check) => check.status === status).length} ${status.toLowerCase()}`)
        .join(', ');
      const reason = NOT_APPLICABLE[scenario];
      if (reason !== undefined) {
        console.log(`n/a   ${scenario}: ${reason} (${counts})`);
        continue;
      }
      if (failures.length === 0) {
        passed += 1;
        console.log(`PASS  ${scenario} (${counts})`);
      } else {
        failed += 1;
        console.log(`FAIL  ${scenario} (${counts})`);
        for (const failure of failures) {
          console.log(`        ${failure.id}: ${failure.errorMessage ?? failure.description}`);
        }
      }
    }
    const only = process.argv.slice(2).includes('--scenario');
    for (const scenario of only ? [] : EXPECTED.filter((name) => !results.has(name))) {
      failed += 1;
      console.log(`FAIL  ${scenario}: the suite reported nothing for it`);
    }
    console.log(`\nconformance: ${passed} passed, ${failed} failed`);
    return failed === 0 ? 0 : 1;
  } finally {
    proxy?.closeAllConnections();
    proxy?.close();
    if (service && service.exitCode === null) {
      service.kill('SIGTERM');
      await new Promise((r) => service.on('exit', r));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

function suiteVersion() {
  return JSON.parse(readFileSync(join(dirname(suite), '../package.json'), 'utf8')).version;
}

main_().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
    console.log('\nconformance: 0 passed, 1 failed');
    process.exit(1);
  },
);
