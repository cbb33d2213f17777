// `npm run conformance:mcp`: the official MCP conformance suite (@modelcontextprotocol/conformance) against a
// freshly started service (embedded database in a temporary DATA_DIR, a project and API key made with the CLI),
// in three parts, each pinned in package.json:
//   2025-11-25     the server scenarios of the release (0.1.16), against /v1/mcp;
//   2026-07-28     the scenarios the 0.2 pre-release's requirement set names for revision 2026-07-28
//                  (installed as @modelcontextprotocol/conformance-next), against /v1/mcp;
//   authorization  the pre-release's authorization-server scenarios against a project's MCP address, whose
//                  authorization server signs the user in through an identity provider started here.
// Prints one line per scenario and a last line "conformance: N passed, N failed"; exits 1 when a scenario that
// applies to Patchbay fails. `-- --only 2026-07-28` runs one part, `-- --scenario ping` one scenario.
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
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist/src/main.js');
const SUITE = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const SUITE_NEXT = join(root, 'node_modules/@modelcontextprotocol/conformance-next/dist/index.js');
const OWNER = 'conformance-user';

const NO_PROMPTS = 'no prompts';
const NO_RESOURCES = 'no resources';

/** Server scenarios of 0.1.16 (2025-11-25) that test what Patchbay does not offer (listed in docs/mcp.md too). */
const NOT_APPLICABLE = {
  'completion-complete': 'no prompts or resource templates, so no completion',
  'logging-set-level': 'no logging capability',
  'prompts-get-embedded-resource': NO_PROMPTS,
  'prompts-get-simple': NO_PROMPTS,
  'prompts-get-with-args': NO_PROMPTS,
  'prompts-get-with-image': NO_PROMPTS,
  'prompts-list': NO_PROMPTS,
  'resources-list': NO_RESOURCES,
  'resources-read-binary': NO_RESOURCES,
  'resources-read-text': NO_RESOURCES,
  'resources-subscribe': NO_RESOURCES,
  'resources-templates-read': NO_RESOURCES,
  'resources-unsubscribe': NO_RESOURCES,
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

const TEST_TOOL = (name) => `calls a test tool by name (${name}); Patchbay's tools are catalogue functions`;
const TASKS =
  'the tasks extension (io.modelcontextprotocol/tasks, SEP-2663), which Patchbay does not offer (the requirement set ' +
  'does not score it either); it calls test tools by name (slow_compute, greet, failing_job…)';
const CACHING_UNOFFERED =
  "the pre-release calls it whatever server/discover declared (caching.ts's queryEndpoint); with no such " +
  'capability, -32601 is the right answer';
const NEEDS_TOOL = (name) =>
  `needs the diagnostic test tool ${name}; the pre-release reports "not testable" as a failure`;

/**
 * What does not apply in the pre-release's 2026-07-28 run (docs/mcp.md lists them too): whole scenarios, or one
 * check of a scenario as `scenario:check-id` (its other checks still count).
 */
const NOT_APPLICABLE_2026 = {
  'completion-complete': 'no prompts or resource templates, so no completion',
  'prompts-get-embedded-resource': NO_PROMPTS,
  'prompts-get-simple': NO_PROMPTS,
  'prompts-get-with-args': NO_PROMPTS,
  'prompts-get-with-image': NO_PROMPTS,
  'prompts-list': NO_PROMPTS,
  'resources-list': NO_RESOURCES,
  'resources-read-binary': NO_RESOURCES,
  'resources-read-text': NO_RESOURCES,
  'resources-templates-read': NO_RESOURCES,
  'tools-call-audio': TEST_TOOL('test_audio_content'),
  'tools-call-embedded-resource': TEST_TOOL('test_embedded_resource'),
  'tools-call-error': TEST_TOOL('test_error_handling'),
  'tools-call-image': TEST_TOOL('test_image_content'),
  'tools-call-mixed-content': TEST_TOOL('test_multiple_content_types'),
  'tools-call-simple-text': TEST_TOOL('test_simple_text'),
  'tools-call-with-progress': TEST_TOOL('test_tool_with_progress'),
  'json-schema-2020-12': TEST_TOOL('json_schema_2020_12_tool'),
  'input-required-result-basic-elicitation': TEST_TOOL('test_input_required_result_elicitation'),
  'input-required-result-basic-list-roots': TEST_TOOL('test_input_required_result_list_roots'),
  'input-required-result-basic-sampling': TEST_TOOL('test_input_required_result_sampling'),
  'input-required-result-capability-check': TEST_TOOL('test_input_required_result_capabilities'),
  'input-required-result-multi-round': TEST_TOOL('test_input_required_result_multi_round'),
  'input-required-result-multiple-input-requests': TEST_TOOL('test_input_required_result_multiple_inputs'),
  'input-required-result-request-state': TEST_TOOL('test_input_required_result_request_state'),
  'input-required-result-result-type': TEST_TOOL('test_input_required_result_elicitation'),
  'input-required-result-tampered-state': TEST_TOOL('test_input_required_result_tampered_state'),
  'input-required-result-non-tool-request': `gets a test prompt by name (test_input_required_result_prompt); ${NO_PROMPTS}`,
  'http-custom-header-server-validation':
    'needs tools whose parameters carry x-mcp-header annotations (SEP-2243 custom headers), which Patchbay does not offer',
  'tasks-capability-negotiation': TASKS,
  'tasks-dispatch-and-envelope': TASKS,
  'tasks-lifecycle': TASKS,
  'tasks-mrtr-composition': TASKS,
  'tasks-mrtr-input': TASKS,
  'tasks-request-headers': TASKS,
  'tasks-request-state-removal': TASKS,
  'tasks-required-task-error': TASKS,
  'tasks-status-notifications': TASKS,
  'tasks-wire-fields': TASKS,
  'caching:sep-2549-prompts-list-caching-hints': `${NO_PROMPTS}: ${CACHING_UNOFFERED}`,
  'caching:sep-2549-resources-list-caching-hints': `${NO_RESOURCES}: ${CACHING_UNOFFERED}`,
  'caching:sep-2549-resources-templates-list-caching-hints': `${NO_RESOURCES}: ${CACHING_UNOFFERED}`,
  'server-stateless:sep-2575-server-rejects-undeclared-capability': NEEDS_TOOL('test_missing_capability'),
  'server-stateless:sep-2575-missing-capability-http-400': NEEDS_TOOL('test_missing_capability'),
  'server-stateless:sep-2575-http-server-no-independent-requests-on-stream': NEEDS_TOOL('test_streaming_elicitation'),
  'server-stateless:sep-2575-server-no-log-without-loglevel': `${NEEDS_TOOL('test_logging_tool')} (and Patchbay does not log to clients)`,
};

/** The parts of the run; `expected` are the scenarios that applied and passed when this was written. */
const PARTS = [
  {
    name: '2025-11-25',
    suite: SUITE,
    // Every server scenario of the release, pending ones included.
    args: (url) => ['server', '--url', url, '--suite', 'all'],
    one: (url, scenario) => ['server', '--url', url, '--scenario', scenario],
    notApplicable: NOT_APPLICABLE,
    expected: ['dns-rebinding-protection', 'ping', 'server-initialize', 'server-sse-multiple-streams', 'tools-list'],
  },
  {
    name: '2026-07-28',
    suite: SUITE_NEXT,
    // The revision's frozen requirement set, at its own wire (stateless, per-request _meta).
    args: (url) => ['server', '--url', url, '--requirements', '2026-07-28'],
    one: (url, scenario) => ['server', '--url', url, '--scenario', scenario, '--spec-version', '2026-07-28', '--force'],
    notApplicable: NOT_APPLICABLE_2026,
    expected: [
      'caching',
      'dns-rebinding-protection',
      'http-header-validation',
      'input-required-result-ignore-extra-params',
      'input-required-result-missing-input-response',
      'input-required-result-unsupported-methods',
      'input-required-result-validate-input',
      'sep-2164-resource-not-found',
      'server-sse-multiple-streams',
      'server-stateless',
      'tools-list',
    ],
  },
  {
    name: 'authorization',
    suite: SUITE_NEXT,
    notApplicable: {},
    expected: ['authorization-code-grant', 'authorization-server-metadata-endpoint'],
  },
];

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

/** The checks of each scenario the suite wrote under `dir` (one folder per scenario). */
function readResults(dir) {
  const results = new Map();
  for (const entry of existsSync(dir) ? readdirSync(dir) : []) {
    const file = join(dir, entry, 'checks.json');
    const match = /^(?:server-|authorization-server-)?(.+?)-\d{4}-\d\d-\d\dT.+$/.exec(entry);
    if (!match || !existsSync(file)) {
      continue;
    }
    results.set(match[1], JSON.parse(readFileSync(file, 'utf8')));
  }
  return results;
}

/**
 * Runs the suite with `args` from `work`; `onLine` sees each line it prints (and the suite's process). Returns what it printed and its
 * exit code. Node 20 lacks fs.globSync, which the suite imports (only its tier-check command calls it).
 */
async function runSuite(suite, args, work, onLine = () => {}) {
  const preload = join(root, 'scripts/conformance-fs-shim.mjs');
  const run = spawn(process.execPath, ['--import', preload, suite, ...args], {
    cwd: work,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let pending = '';
  run.stdout.on('data', (chunk) => {
    output += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    lines.forEach((line) => onLine(line, run));
  });
  run.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((r) => run.on('close', r));
  return { output, code };
}

/**
 * The authorization part: the project's identity provider (a real OpenID Connect provider on 127.0.0.1) and a
 * public client registered by DCR with the suite's callback, then the suite's authorization-server scenarios
 * against the project's MCP address (the issuer). The suite prints the authorization URL for a person to open;
 * here the browser is played (bench/mcp-oauth-sign-in.ts: the provider's login, Patchbay's consent), and the
 * redirect is delivered to the suite's callback server, which then exchanges the code.
 */
async function runAuthorization(base, apiKey, out) {
  const { startProjectSignIn, playSignIn } = await import(join(root, 'dist/bench/mcp-oauth-sign-in.js'));
  // The user's browser from the printed authorization URL to the suite's callback.
  const playBrowser = async (start, [patchbay, identityProvider], login) => {
    const { redirect, stoppedAt } = await playSignIn(start, { patchbay, identityProvider }, { login });
    if (!redirect) {
      throw new Error(`the sign-in stopped at ${stoppedAt?.url.pathname} with ${stoppedAt?.status}`);
    }
    return redirect;
  };
  const client = await import('openid-client');
  const signIn = await startProjectSignIn(base, apiKey);
  try {
    const port = await freePort();
    const registered = await client.dynamicClientRegistration(
      new URL(signIn.mcpUrl),
      {
        client_name: 'MCP conformance suite',
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      client.None(),
      { algorithm: 'oauth2', execute: [client.allowInsecureRequests] },
    );
    const clientId = registered.clientMetadata().client_id;
    const authorizationEndpoint = registered.serverMetadata().authorization_endpoint;
    const browsing = [];
    const args = ['authorization', '--url', signIn.mcpUrl, '--client-id', clientId, '--resource', signIn.mcpUrl];
    const run = await runSuite(
      SUITE_NEXT,
      [...args, '--port', String(port), '--output-dir', out],
      dirname(out),
      (line, child) => {
        if (line.startsWith(`${authorizationEndpoint}?`)) {
          browsing.push(
            playBrowser(new URL(line), signIn.origins, OWNER)
              .then((redirect) => fetch(redirect))
              .catch((error) => {
                // The suite would wait five minutes for the callback: stop it and say why.
                console.log(`      the sign-in failed: ${error instanceof Error ? error.message : String(error)}`);
                child.kill('SIGTERM');
              }),
          );
        }
      },
    );
    await Promise.all(browsing);
    return run;
  } finally {
    await signIn.close();
  }
}

function parseOptions() {
  const { values } = parseArgs({ options: { only: { type: 'string' }, scenario: { type: 'string' } } });
  if (values.only !== undefined && !PARTS.some((part) => part.name === values.only)) {
    throw new Error(`--only takes one of ${PARTS.map((part) => part.name).join(', ')}`);
  }
  return values;
}

async function main_() {
  const options = parseOptions();
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
  let passed = 0;
  let failed = 0;
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
    const url = `${env.PUBLIC_BASE_URL}/v1/mcp`;

    for (const part of PARTS.filter((candidate) => (options.only ?? candidate.name) === candidate.name)) {
      const out = join(work, `results-${part.name}`);
      console.log(`\n${part.name}: conformance suite ${suiteVersion(part.suite)} (through the credential proxy)`);
      let run;
      if (part.args === undefined) {
        run = await runAuthorization(env.PUBLIC_BASE_URL, apiKey, out);
      } else {
        const args = options.scenario === undefined ? part.args(url) : part.one(url, options.scenario);
        run = await runSuite(part.suite, [...args, '--output-dir', out], work);
      }
      const results = readResults(out);
      if (results.size === 0 && options.scenario !== undefined) {
        console.log(`      ${part.name} has no scenario ${options.scenario}`);
        continue;
      }
      if (results.size === 0) {
        console.log(run.output);
        console.log(`FAIL  ${part.name}: the suite wrote no results (exit ${run.code})`);
        failed += 1;
        continue;
      }
      for (const [scenario, checks] of [...results].sort(([a], [b]) => a.localeCompare(b))) {
        const excused = (check) => part.notApplicable[`${scenario}:${check.id}`];
        const failures = checks.filter((check) => check.status === 'FAILURE' && excused(check) === undefined);
        const counts = ['SUCCESS', 'WARNING', 'FAILURE']
          .map((status) => `${checks.filter((check) => check.status === status).length} ${status.toLowerCase()}`)
          .join(', ');
        const reason = part.notApplicable[scenario];
        if (reason !== undefined) {
          console.log(`n/a   ${part.name} ${scenario}: ${reason} (${counts})`);
          continue;
        }
        if (failures.length === 0) {
          passed += 1;
          console.log(`PASS  ${part.name} ${scenario} (${counts})`);
          for (const check of checks.filter((candidate) => candidate.status === 'FAILURE')) {
            console.log(`        n/a ${check.id}: ${excused(check)}`);
          }
        } else {
          failed += 1;
          console.log(`FAIL  ${part.name} ${scenario} (${counts})`);
          for (const failure of failures) {
            console.log(`        ${failure.id}: ${failure.errorMessage ?? failure.description}`);
          }
        }
      }
      // Each scenario that passed when this was written must report, so that a crash cannot hide one.
      for (const scenario of options.scenario ? [] : part.expected.filter((name) => !results.has(name))) {
        failed += 1;
        console.log(`FAIL  ${part.name} ${scenario}: the suite reported nothing for it`);
      }
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

function suiteVersion(suite) {
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
