/**
 * `npm run eval:search`: retrieval quality of intent search on the ACI catalogue.
 *
 * Imports ../shared/catalogs/aci into a fresh embedded database with the real command line, starts
 * the real service once per ranking mode (SEARCH_RANKING, an internal setting), sends every line of
 * ../shared/eval/{functions,apps}-dev.jsonl through the HTTP API and prints recall@1, recall@5, MRR
 * and latency. `hybrid` is what the service does; `bm25` (plain BM25 over all the text, words as
 * typed) and `vector` (embedding similarity alone) are the baselines; `lexical` is hybrid without
 * the vectors. Extra environment (e.g. EMBEDDINGS_PROVIDER=openai …) is passed to the service.
 *
 * Then, in process (bench/cross-validate.ts, the offline embedding only), the same rankings with the
 * settings chosen by 5-fold cross-validation next to the in-sample figures, and per-field ablations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEvaluator,
  crossValidate,
  type Evaluator,
  figures,
  FOLDS,
  grid,
  rankCache,
  type Setting,
} from './cross-validate.js';
import { SEARCH_FIELDS } from '../src/search/search-document.js';
import {
  type EvalLine,
  getJson,
  patchbay,
  percentile,
  readJsonl,
  SHARED,
  searchUrl,
  startService,
  table,
} from './support.js';

const MODES = ['hybrid', 'bm25', 'vector', 'lexical'] as const;

interface Metrics {
  recall1: number;
  recall5: number;
  mrr: number;
  p50: number;
  p95: number;
}

async function evaluate(url: string, apiKey: string, kind: 'apps' | 'functions', lines: EvalLine[]): Promise<Metrics> {
  let hits1 = 0;
  let hits5 = 0;
  let reciprocal = 0;
  const latencies: number[] = [];
  for (const line of lines) {
    const { body, ms } = await getJson<{ name: string }[]>(searchUrl(url, kind, { intent: line.intent }), apiKey);
    latencies.push(ms);
    const rank = body.findIndex((item) => line.expected.includes(item.name));
    if (rank === 0) {
      hits1++;
    }
    if (rank >= 0 && rank < 5) {
      hits5++;
    }
    if (rank >= 0) {
      reciprocal += 1 / (rank + 1);
    }
  }
  const n = lines.length;
  return {
    recall1: hits1 / n,
    recall5: hits5 / n,
    mrr: reciprocal / n,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-eval-'));
  const passthrough = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key.startsWith('EMBEDDINGS_')),
  ) as Record<string, string>;
  const env = { DATA_DIR: dataDir, ...passthrough };
  try {
    const started = performance.now();
    await patchbay(['catalog', 'import', join(SHARED, 'catalogs', 'aci'), '--json'], env);
    const importSeconds = (performance.now() - started) / 1000;
    const { api_key: apiKey } = JSON.parse(await patchbay(['projects', 'create', '--name', 'eval', '--json'], env)) as {
      api_key: string;
    };
    const sets = {
      functions: readJsonl(join(SHARED, 'eval', 'functions-dev.jsonl')),
      apps: readJsonl(join(SHARED, 'eval', 'apps-dev.jsonl')),
    };
    const rows: (string | number)[][] = [];
    for (const mode of MODES) {
      const service = await startService({ ...env, SEARCH_RANKING: mode });
      try {
        // The first search loads the index into memory; it is not an intent of the sets.
        await getJson(searchUrl(service.url, 'functions', { intent: 'warm up' }), apiKey);
        for (const kind of ['functions', 'apps'] as const) {
          const m = await evaluate(service.url, apiKey, kind, sets[kind]);
          rows.push([
            `${kind}-dev.jsonl (${sets[kind].length})`,
            mode === 'hybrid' ? '**hybrid** (default)' : mode,
            m.recall1.toFixed(3),
            m.recall5.toFixed(3),
            m.mrr.toFixed(3),
            m.p50.toFixed(1),
            m.p95.toFixed(1),
          ]);
        }
      } finally {
        await service.stop();
      }
    }
    rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])) * -1);
    const provider = passthrough.EMBEDDINGS_PROVIDER ?? 'offline';
    console.log(`Search quality on the ACI catalogue (98 apps, 987 functions), embeddings: ${provider}`);
    console.log(`Catalogue import with search index and embeddings: ${importSeconds.toFixed(1)} s\n`);
    console.log(table(['eval set', 'ranking', 'recall@1', 'recall@5', 'MRR', 'p50 ms', 'p95 ms'], rows));
    if (provider === 'offline') {
      await crossValidated();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const three = (rr: number[]) => {
  const m = figures(rr);
  return [m.recall1.toFixed(3), m.recall5.toFixed(3), m.mrr.toFixed(3)];
};

/** The in-process tables: cross-validated figures per ranking, then the ablations of the default. */
async function crossValidated(): Promise<void> {
  const evaluator: Evaluator = await createEvaluator();
  const families = grid(evaluator.hasWordVectors, evaluator.encoderId);
  const cache = rankCache(evaluator);
  const rows: (string | number)[][] = [];
  let chosen: Setting | undefined;
  for (const [family, settings] of Object.entries(families)) {
    const ranks = new Map(settings.map((setting) => [setting, cache(setting)]));
    const cv = crossValidate(settings, ranks);
    const label = family === 'hybrid' ? '**hybrid** (default)' : family;
    rows.push(['functions', label, settings.length, ...three(cv.bestRanks.functions), ...three(cv.functions)]);
    rows.push(['apps', label, settings.length, ...three(cv.bestRanks.apps), ...three(cv.apps)]);
    if (family === 'hybrid') {
      chosen = cv.best;
      console.log(`\nhybrid: best setting on all lines: ${cv.best.label}`);
      cv.chosen.forEach((setting, k) => console.log(`  chosen on the folds other than ${k}: ${setting.label}`));
    }
  }
  rows.sort((a, b) => String(b[0]).localeCompare(String(a[0])));
  console.log(
    `\nIn process, offline embedding${evaluator.hasWordVectors ? ' with word vectors' : ''}: the best of ` +
      `each ranking's settings on all lines (in-sample) and chosen on ${FOLDS - 1} folds, scored on the fifth (${FOLDS}-fold CV)` +
      `${evaluator.encoderId ? `; sentence encoder ${evaluator.encoderId}` : ''}\n`,
  );
  console.log(table(['set', 'ranking', 'settings', 'in-sample R@1', 'R@5', 'MRR', 'CV R@1', 'CV R@5', 'CV MRR'], rows));
  if (!chosen) {
    return;
  }
  // Ablations of the chosen hybrid setting: one lexical field off, or the vectors' word-vector part off.
  const ablations: [string, Setting, Partial<Record<(typeof SEARCH_FIELDS)[number], number>>][] = [
    ['hybrid as chosen', chosen, {}],
    ...SEARCH_FIELDS.map(
      (field) => [`without the ${field} field`, chosen, { [field]: 0 }] as [string, Setting, Record<string, number>],
    ),
    ['without the word vectors (hashed only)', { ...chosen, embedding: { ...chosen.embedding, semanticShare: 0 } }, {}],
    ['word vectors only (no hashed features)', { ...chosen, embedding: { ...chosen.embedding, semanticShare: 1 } }, {}],
  ];
  const ablationRows = ablations.map(([label, setting, fields]) => {
    const r = evaluator.reciprocalRanks(setting, fields);
    return [label, ...three(r.functions), ...three(r.apps)];
  });
  console.log('\nAblations of the default (in-sample)\n');
  console.log(table(['ranking', 'functions R@1', 'R@5', 'MRR', 'apps R@1', 'R@5', 'MRR'], ablationRows));
}

await main();
