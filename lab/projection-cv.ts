// 5-fold CV (bench/search-quality.ts's crossValidate, all five sets together) over the trained variants
// scored by lab/projection-eval.ts: which training choice (pairs, weights, W, temperature, epochs) the
// held-out folds pick, and its held-out figures per set. ONLY=regex keeps some variants.
//
// Run: node dist-lab/lab/directory-pairs.js /tmp/proj-lab/directory.json, then projection-eval.js per
// variant (LABEL, OPTS, SCORE_EPOCHS; LABEL=baseline first), then this; projection-grid.js for one variant.
//
// Result (2026-11-29, issue #29): it lost; the shipped sentence vector stays. 28 variants (W 100×100 or
// 64×100 and/or per-word weights; pairs summary↔description, ↔path, ↔operationId, title+tags↔summary;
// temperature 0.05/0.1; batches grouped 1/8/32 per document or by path (siblings as negatives); lr
// 1e-3/3e-4; 1-3 epochs; 123,887 operations of 2,584 documents, the within-app providers left out).
// R@1/R@5/MRR, shipped → CV-chosen variant:
// - vector only gains on users: functions-users 0.291/0.458/0.366 → 0.335/0.520/0.420, within-app R@5
//   0.624 → 0.661, R@1 flat (0.321 → 0.321); dev and apps within a line or two.
// - the default fusion does not: folds chose the shipped vectors 3 times of 5, and the held-out figures
//   fall (functions-users 0.480/0.700/0.571 → 0.489/0.692/0.574, within-app R@1 0.381 → 0.344). With the
//   vector weight 0.6 and the word vectors' share 0.75 as further choices, folds chose learned vectors 4
//   times of 5 and held out lose more (functions-dev 0.780 → 0.768 MRR, functions-users 0.571 → 0.558).
// - projection-grid.js with the best vector-only variant (W+weights, summary↔description, 1 epoch) under
//   eval:search's 41 settings: CV functions-users 0.458/0.705/0.560, within-app 0.349/0.711/0.497; both
//   grids together, 4 folds of 5 chose the shipped vectors.
// - training on the within-app providers' own documents too changes nothing (within-app R@1 0.344-0.358).
import { readdirSync, readFileSync } from 'node:fs';
import { crossValidate, type Evaluator, figures, type Ranks, SETS, type Setting } from '../bench/search-quality.js';

const DIR = '/tmp/proj-lab/ranks';
const only = process.env.ONLY ? new RegExp(process.env.ONLY) : undefined;
const all = new Map<string, Ranks>();
for (const file of readdirSync(DIR).sort()) {
  const variant = file.replace(/\.json$/, '');
  if (only && variant !== 'baseline' && !only.test(variant)) continue;
  const data = JSON.parse(readFileSync(`${DIR}/${file}`, 'utf8')) as Record<string, Ranks>;
  for (const [name, ranks] of Object.entries(data)) all.set(`${variant}:${name}`, ranks);
}
const any = all.values().next().value!;
const evaluator = {
  lines: Object.fromEntries(SETS.map((set) => [set, any[set]])),
  ranks: (setting: Setting) => all.get(setting.label)!,
} as unknown as Evaluator;
const f3 = (rr: number[]) => {
  const m = figures(rr);
  return `${m.recall1.toFixed(3)}/${m.recall5.toFixed(3)}/${m.mrr.toFixed(3)}`;
};
const families: Record<string, (label: string) => boolean> = {
  'default fusion': (l) => l.endsWith(':default'),
  'vector only': (l) => l.endsWith(':vector'),
  'any fusion': (l) => !l.endsWith(':vector'),
};
for (const [family, keep] of Object.entries(families)) {
  const settings: Setting[] = [...all.keys()].filter(keep).map((label) => ({ label, engine: {} }));
  const cv = crossValidate(settings, evaluator);
  console.log(
    `\n${family}: ${settings.length} settings; best on all: ${cv.best.label}; per fold: ${cv.chosen.map((s) => s.label).join(', ')}`,
  );
  const base = all.get(family === 'vector only' ? 'baseline:vector' : 'baseline:default')!;
  for (const set of SETS) {
    console.log(
      `  ${set.padEnd(16)} baseline ${f3(base[set])}  in-sample ${f3(cv.bestRanks[set])}  CV ${f3(cv.heldOut[set])}`,
    );
  }
}
if (process.env.LIST) {
  console.log('\nall variants:');
  for (const [label, ranks] of all)
    console.log(`  ${label.padEnd(24)} ${SETS.map((set) => f3(ranks[set])).join('  ')}`);
}
