/**
 * Lab: times the in-process engine over the ACI catalogue grown to `copies` copies (as
 * bench/grow-catalog.ts grows it), on the 150 intents of functions-dev.jsonl. Prints per-search
 * p50/mean of rankFunctions and rankApps (query embedding apart), and a checksum of every ranking
 * so that two builds can be compared (it must not change when only speed does). Run under
 * `node --cpu-prof` to see where the time goes.
 *   npx tsc -p lab/tsconfig.json && node dist-lab/lab/profile-search.js 100 [rounds]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  analyseFields,
  appDocument,
  type AppText,
  DEFAULT_ENGINE_OPTIONS,
  functionDocument,
  type FunctionText,
  loadWordVectors,
  SEARCH_FIELDS,
  SEMANTIC_EMBEDDING_DEFAULTS,
  SearchEngine,
  SemanticEmbeddingProvider,
  TermDictionary,
  WordNet,
} from '../src/search/index.js';
import { readJsonl, SHARED } from '../bench/support.js';

const VARIANTS = ['batch', 'archive', 'export', 'audit', 'team', 'workspace', 'report', 'sync', 'bulk', 'legacy', 'v2'];
const copies = Number(process.argv[2] ?? 100);
const rounds = Number(process.argv[3] ?? 3);

type Fn = FunctionText & { visibility: string; active: boolean };
const dir = join(SHARED, 'catalogs', 'aci');
const apps: { app: AppText; visible: boolean; functions: Fn[] }[] = [];
for (const folder of readdirSync(dir, { withFileTypes: true })) {
  if (!folder.isDirectory()) continue;
  const read = (file: string) => JSON.parse(readFileSync(join(dir, folder.name, file), 'utf8')) as unknown;
  const app = read('app.json') as AppText & { visibility: string; active: boolean };
  const functions = (read('functions.json') as Fn[]).map((fn) => ({ ...fn, app_name: app.name }));
  apps.push({ app, visible: app.visibility === 'public' && app.active, functions });
}
const grown = [...apps];
for (let n = 2; n <= copies; n++) {
  for (const { app, visible, functions } of apps) {
    const name = `${app.name}_X${n}`;
    grown.push({
      app: {
        ...app,
        name,
        display_name: `${app.display_name} ${n}`,
        description: `${app.description} ${VARIANTS[1 + (n % VARIANTS.length) - 1]}`,
      },
      visible,
      functions: functions.map((fn) => ({
        ...fn,
        name: `${name}__${fn.name.slice(fn.name.indexOf('__') + 2)}`,
        app_name: name,
        description: `${fn.description} ${VARIANTS[(n + fn.name.length) % VARIANTS.length]}`,
      })),
    });
  }
}

const wordnet = WordNet.open();
const provider = new SemanticEmbeddingProvider(loadWordVectors()!, wordnet, SEMANTIC_EMBEDDING_DEFAULTS);
const dictionary = new TermDictionary();
const pack = (fields: Parameters<typeof analyseFields>[0]) => {
  const terms = analyseFields(fields);
  return dictionary.pack(SEARCH_FIELDS.map((field) => terms[field]));
};
let started = performance.now();
const engineApps = grown.map(({ app, visible, functions }) => {
  const doc = appDocument(app, functions);
  return {
    name: app.name,
    description: app.description,
    categories: app.categories,
    visible,
    terms: pack(doc.fields),
    embedding: provider.embed(doc.embedding_text),
  };
});
const engineFunctions = grown.flatMap(({ app, visible, functions }) =>
  functions.map((fn) => {
    const doc = functionDocument(fn, app);
    return {
      name: fn.name,
      app_name: fn.app_name,
      description: fn.description,
      visible: visible && fn.visibility === 'public' && fn.active,
      terms: pack(doc.fields),
      embedding: provider.embed(doc.embedding_text),
    };
  }),
);
const engine = SearchEngine.fromItems(engineApps, engineFunctions, dictionary, {
  ...DEFAULT_ENGINE_OPTIONS,
  vectorWeight: (provider as { vectorWeight?: number }).vectorWeight ?? DEFAULT_ENGINE_OPTIONS.vectorWeight,
  minSimilarity: provider.minSimilarity,
  wordnet,
});
console.error(`${engine.functionCount} functions, built in ${((performance.now() - started) / 1000).toFixed(1)} s`);

const intents = readJsonl(join(SHARED, 'eval', 'functions-dev.jsonl')).map((line) => line.intent);
const vectors = intents.map((intent) => provider.embed(intent));
started = performance.now();
for (let i = 0; i < vectors.length; i++) provider.embed(intents[i]);
const embedMs = (performance.now() - started) / vectors.length;
const hash = createHash('sha256');
const times: number[] = [];
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < intents.length; i++) {
    const t = performance.now();
    const hits = engine.rankFunctions({ intent: intents[i], vector: vectors[i], offset: 0, limit: 10 }, {});
    times.push(performance.now() - t);
    if (round === 0) hash.update(hits.map((hit) => hit.name).join(',') + '\n');
  }
}
const appTimes: number[] = [];
for (let i = 0; i < intents.length; i++) {
  const t = performance.now();
  const hits = engine.rankApps({ intent: intents[i], vector: vectors[i], offset: 0, limit: 10 }, {});
  appTimes.push(performance.now() - t);
  hash.update(hits.map((hit) => hit.name).join(',') + '\n');
}
const last = times.slice(-intents.length).sort((a, b) => a - b);
const p = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
appTimes.sort((a, b) => a - b);
console.log(
  `functions: p50 ${p(last, 0.5).toFixed(2)} p95 ${p(last, 0.95).toFixed(2)} mean ${mean(last).toFixed(2)} ms; ` +
    `apps: p50 ${p(appTimes, 0.5).toFixed(2)} mean ${mean(appTimes).toFixed(2)} ms; ` +
    `query embedding ${embedMs.toFixed(2)} ms; rankings ${hash.digest('hex').slice(0, 16)}`,
);
