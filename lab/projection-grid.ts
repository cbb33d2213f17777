// The final check of a trained variant (OPTS, EPOCHS as lab/projection-eval.ts): eval:search's grid (the
// default's 41 settings and the baselines) with the shipped sentence vector and with the learned one,
// each cross-validated alone, then the two grids together (does CV pick the learned vectors?).
import {
  createEvaluator,
  crossValidate,
  type Evaluator,
  figures,
  grid,
  type Ranks,
  SETS,
  type Setting,
} from '../bench/search-quality.js';
import { readFileSync } from 'node:fs';
import { loadWordVectors } from '../src/search/index.js';
import type { DirectoryDocument } from './directory-pairs.js';
import { bake } from './projection-eval.js';
import { Basis, type Model, train, TRAIN_DEFAULTS, type TrainOptions } from './train-projection.js';

const shipped = loadWordVectors()!;
const options: TrainOptions = {
  ...TRAIN_DEFAULTS,
  ...(JSON.parse(process.env.OPTS ?? '{}') as Partial<TrainOptions>),
};
const docs = JSON.parse(
  readFileSync(process.env.DIRECTORY_JSON ?? '/tmp/proj-lab/directory.json', 'utf8'),
) as DirectoryDocument[];
const basis = new Basis(shipped);
let model: Model | undefined;
await train(docs, basis, options, (m) => {
  model = m;
});
const learned = await createEvaluator({ vectors: bake(model!, basis, 'lab-grid') });
const base = await createEvaluator();
const f3 = (rr: number[]) => {
  const m = figures(rr);
  return `${m.recall1.toFixed(3)}/${m.recall5.toFixed(3)}/${m.mrr.toFixed(3)}`;
};
const report = (title: string, settings: Setting[], evaluator: Evaluator) => {
  const cv = crossValidate(settings, evaluator);
  console.log(
    `\n${title} (${settings.length} settings): best ${cv.best.label}; folds: ${cv.chosen.map((s) => s.label).join(' | ')}`,
  );
  for (const set of SETS)
    console.log(`  ${set.padEnd(16)} in-sample ${f3(cv.bestRanks[set])}  CV ${f3(cv.heldOut[set])}`);
};
for (const [name, evaluator] of [
  ['shipped', base],
  ['learned', learned],
] as const) {
  for (const [family, settings] of Object.entries(grid())) {
    if (family === 'plain BM25' || family === 'lexical only') continue;
    report(`${name} vectors, ${family === 'hybrid' ? 'default' : family}`, settings, evaluator);
  }
}
// Both grids together: labels prefixed, ranks from the matching evaluator.
const both: Setting[] = [];
const owner = new Map<string, [Evaluator, Setting]>();
for (const [name, evaluator] of [
  ['shipped', base],
  ['learned', learned],
] as const) {
  for (const setting of grid().hybrid) {
    const label = `${name}: ${setting.label}`;
    both.push({ ...setting, label });
    owner.set(label, [evaluator, setting]);
  }
}
const joint = {
  lines: base.lines,
  ranks: (setting: Setting): Ranks => {
    const [evaluator, original] = owner.get(setting.label)!;
    return evaluator.ranks(original);
  },
} as unknown as Evaluator;
report('both grids together', both, joint);
