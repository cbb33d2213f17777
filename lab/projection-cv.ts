// 5-fold CV (bench/search-quality.ts's crossValidate, all five sets together) over the trained variants
// scored by lab/projection-eval.ts: which training choice (pairs, weights, W, temperature, epochs) the
// held-out folds pick, and its held-out figures per set. ONLY=regex keeps some variants.
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
