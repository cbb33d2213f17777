/**
 * `npm run eval:search`: retrieval quality of intent search.
 *
 * 1. In process (bench/search-quality.ts, through src/search/index.ts): the dev, users' and
 *    within-app sets for the default ranking and the baselines (plain BM25, lexical only, vector
 *    only), in-sample and 5-fold cross-validated over all the sets together, each set reported apart.
 * 2. Through HTTP, unless EVAL_HTTP=0: the ACI catalogue imported with the real command line into a
 *    fresh embedded database, the real service started, every line of the dev and users' sets sent to
 *    the search endpoints; the figures must equal the in-process default's (same code, same data).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEvaluator, crossValidate, figures, FOLDS, grid, type Ranks, SETS } from './search-quality.js';
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

const three = (rr: number[]) => {
  const m = figures(rr);
  return [m.recall1.toFixed(3), m.recall5.toFixed(3), m.mrr.toFixed(3)];
};

async function inProcess(): Promise<void> {
  const started = performance.now();
  const evaluator = await createEvaluator();
  const rows: (string | number)[][] = [];
  const families = grid();
  const cvRows = (family: string, inSample: Ranks, heldOut: Ranks, count: number) => {
    for (const set of SETS) {
      rows.push([set, family, count, ...three(inSample[set]), ...three(heldOut[set])]);
    }
  };
  for (const [family, settings] of Object.entries(families)) {
    const cv = crossValidate(settings, evaluator);
    cvRows(family === 'hybrid' ? '**default**' : family, cv.bestRanks, cv.heldOut, settings.length);
    if (family === 'hybrid') {
      console.log(`default: best setting on all lines: ${cv.best.label}`);
      cv.chosen.forEach((setting, k) => console.log(`  chosen without fold ${k}: ${setting.label}`));
    }
  }
  rows.sort((a, b) => SETS.indexOf(a[0] as never) - SETS.indexOf(b[0] as never));
  console.log(
    `\nIn process${evaluator.hasWordVectors ? ', offline embedding with word vectors' : ', hashed vectors only'}: ` +
      `the best of each ranking's settings on all lines (in-sample) and chosen on ${FOLDS - 1} folds of all the sets, ` +
      `scored on the fifth (${FOLDS}-fold CV); ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log(table(['set', 'ranking', 'settings', 'in-sample R@1', 'R@5', 'MRR', 'CV R@1', 'CV R@5', 'CV MRR'], rows));
  const sizes = SETS.map((set) => `${set} ${evaluator.lines[set].length}`).join(', ');
  console.log(`\nLines: ${sizes}.`);
}

async function overHttp(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-eval-'));
  const env = { DATA_DIR: dataDir };
  try {
    const started = performance.now();
    await patchbay(['catalog', 'import', join(SHARED, 'catalogs', 'aci'), '--json'], env);
    const importSeconds = (performance.now() - started) / 1000;
    const { api_key: apiKey } = JSON.parse(await patchbay(['projects', 'create', '--name', 'eval', '--json'], env)) as {
      api_key: string;
    };
    const service = await startService(env);
    const rows: (string | number)[][] = [];
    try {
      await getJson(searchUrl(service.url, 'functions', { intent: 'warm up' }), apiKey);
      for (const set of ['functions-dev', 'functions-users', 'apps-dev', 'apps-users']) {
        const kind = set.startsWith('apps') ? 'apps' : 'functions';
        const lines: EvalLine[] = readJsonl(join(SHARED, 'eval', `${set}.jsonl`));
        const rr: number[] = [];
        const latencies: number[] = [];
        for (const line of lines) {
          const { body, ms } = await getJson<{ name: string }[]>(
            searchUrl(service.url, kind, { intent: line.intent }),
            apiKey,
          );
          latencies.push(ms);
          const rank = body.findIndex((item) => line.expected.includes(item.name));
          rr.push(rank >= 0 ? 1 / (rank + 1) : 0);
        }
        rows.push([set, ...three(rr), percentile(latencies, 50).toFixed(1)]);
      }
    } finally {
      await service.stop();
    }
    console.log(
      `\nThrough HTTP (ACI catalogue import with search index and embeddings: ${importSeconds.toFixed(1)} s)\n`,
    );
    console.log(table(['set', 'recall@1', 'recall@5', 'MRR', 'p50 ms'], rows));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await inProcess();
if (process.env.EVAL_HTTP !== '0') {
  await overHttp();
}
