// Trains a projection (lab/train-projection.ts) with the options in OPTS (JSON) and, after each epoch,
// scores the default ranking and vector only with it; ranks go to /tmp/proj-lab/ranks for
// lab/projection-cv.ts. LABEL=baseline scores the shipped sentence vector.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createEvaluator, DEFAULT_SETTING, figures, grid, SETS, type Setting } from '../bench/search-quality.js';
import { loadWordVectors } from '../src/search/index.js';
import { WordVectors } from '../src/search/embeddings/word-vectors.js';
import type { DirectoryDocument } from './directory-pairs.js';
import { Basis, type Model, train, TRAIN_DEFAULTS, type TrainOptions } from './train-projection.js';

const OUT = '/tmp/proj-lab/ranks';
mkdirSync(OUT, { recursive: true });
const shipped = loadWordVectors()!;
const VECTOR_ONLY: Setting = grid()['vector only'][0];

/** The model folded into word vectors the shipped sentence vector code reads: v'_r = exp(b_r) W u_r, no mean, no components. */
export function bake(model: Model, basis: Basis, id: string): WordVectors {
  const d = basis.d;
  const k = model.dims;
  const n = basis.vectors.size;
  const codes = new Int8Array(n * k);
  const scales = new Float32Array(n);
  const row = new Float32Array(k);
  for (let r = 0; r < n; r++) {
    const f = Math.exp(model.b[r]);
    let max = 0;
    for (let a = 0; a < k; a++) {
      let z = 0;
      for (let i = 0; i < d; i++) z += model.W[a * d + i] * basis.u[r * d + i];
      row[a] = f * z;
      max = Math.max(max, Math.abs(row[a]));
    }
    const scale = max / 127 || 1;
    scales[r] = scale;
    for (let a = 0; a < k; a++) codes[r * k + a] = Math.round(row[a] / scale);
  }
  return new WordVectors(k, basis.vectors.words, codes, scales, new Float32Array(k), [], id);
}

async function score(vectors: WordVectors | undefined, label: string): Promise<void> {
  const evaluator = await createEvaluator(vectors ? { vectors } : {});
  const out: Record<string, unknown> = {};
  for (const [name, setting] of [
    ['default', DEFAULT_SETTING],
    ['vector', VECTOR_ONLY],
    ['vw0.6', { label: 'vw0.6', semanticShare: DEFAULT_SETTING.semanticShare, engine: { vectorWeight: 0.6 } }],
    ['share0.75', { label: 'share0.75', semanticShare: 0.75, engine: {} }],
  ] as const) {
    const ranks = evaluator.ranks(setting);
    out[name] = ranks;
    console.log(
      `${label} ${name}: ` +
        SETS.map((set) => {
          const m = figures(ranks[set]);
          return `${set} ${m.recall1.toFixed(3)}/${m.recall5.toFixed(3)}/${m.mrr.toFixed(3)}`;
        }).join('  '),
    );
  }
  writeFileSync(`${OUT}/${label}.json`, JSON.stringify(out));
}

if (process.argv[1]?.endsWith('projection-eval.js')) {
  const label = process.env.LABEL ?? 'run';
  const started = performance.now();
  if (label === 'baseline') {
    await score(undefined, label);
  } else {
    const options: TrainOptions = {
      ...TRAIN_DEFAULTS,
      ...(JSON.parse(process.env.OPTS ?? '{}') as Partial<TrainOptions>),
    };
    const epochsToScore = new Set((process.env.SCORE_EPOCHS ?? String(options.epochs)).split(',').map(Number));
    const docs = JSON.parse(
      readFileSync(process.env.DIRECTORY_JSON ?? '/tmp/proj-lab/directory.json', 'utf8'),
    ) as DirectoryDocument[];
    const basis = new Basis(shipped);
    console.log(label, JSON.stringify(options));
    await train(docs, basis, options, async (model, epoch) => {
      console.log(`trained ${((performance.now() - started) / 1000).toFixed(0)} s`);
      if (epochsToScore.has(epoch)) {
        await score(bake(model, basis, `lab-${label}-e${epoch}`), `${label}-e${epoch}`);
        console.log(`scored ${((performance.now() - started) / 1000).toFixed(0)} s`);
      }
    });
  }
  console.log(`done ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
