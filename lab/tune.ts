// Coordinate ascent over the engine's weights, under 5-fold cross-validation: for each fold, the
// weights are tuned on the other four folds (all sets together) and scored on it.
import {
  createEvaluator,
  DEFAULT_SETTING,
  figures,
  FOLDS,
  type Ranks,
  SETS,
  type Setting,
} from '../bench/search-quality.js';
import { DEFAULT_ENGINE_OPTIONS, DEFAULT_EXPANSION } from '../src/search/index.js';

type Params = Record<string, number>;
const start: Params = {
  fnName: 3,
  fnApp: 2,
  fnTags: 1.5,
  fnDesc: 1,
  fnParams: 0.3,
  fnContext: 0.3,
  fnOperation: 2,
  k1: 1.2,
  appContext: 0.4,
  vectorWeight: 0.4,
  synonym: DEFAULT_EXPANSION.synonym,
  action: DEFAULT_EXPANSION.action,
  compound: DEFAULT_EXPANSION.compound,
  appName: 3,
  appTags: 1.5,
  appDesc: 1,
  appCtx: 0.1,
  bDesc: 0.75,
  bName: 0.5,
};
function setting(p: Params): Setting {
  const f = DEFAULT_ENGINE_OPTIONS.functionFields;
  const a = DEFAULT_ENGINE_OPTIONS.appFields;
  return {
    label: JSON.stringify(p),
    semanticShare: DEFAULT_SETTING.semanticShare,
    engine: {
      functionFields: {
        k1: p.k1,
        weights: {
          name: p.fnName,
          app: p.fnApp,
          tags: p.fnTags,
          description: p.fnDesc,
          params: p.fnParams,
          context: p.fnContext,
          operation: p.fnOperation,
        },
        b: { ...f.b, description: p.bDesc, name: p.bName },
      },
      appFields: {
        k1: p.k1,
        weights: { name: p.appName, tags: p.appTags, description: p.appDesc, context: p.appCtx },
        b: { ...a.b, description: p.bDesc, name: p.bName },
      },
      appContext: p.appContext,
      vectorWeight: p.vectorWeight,
      expansion: { ...DEFAULT_EXPANSION, synonym: p.synonym, action: p.action, compound: p.compound },
    },
  };
}
const evaluator = await createEvaluator();
const fold = (i: number) => i % FOLDS;
function objective(r: Ranks, keep: (i: number) => boolean): number {
  let total = 0;
  for (const set of SETS) {
    const m = figures(r[set].filter((_, i) => keep(i)));
    total += m.mrr + (set === 'within-app' ? m.recall1 : m.recall5);
  }
  return total / SETS.length;
}
const round2 = (x: number) => Math.round(x * 1000) / 1000;
function ascend(keep: (i: number) => boolean, rounds: number): Params {
  let best = { ...start };
  let bestScore = objective(evaluator.ranks(setting(best)), keep);
  for (let round = 0; round < rounds; round++) {
    let improved = false;
    for (const key of Object.keys(start)) {
      for (const factor of [0, 0.5, 0.75, 1.33, 2]) {
        const value = round2(best[key] === 0 ? (factor === 0 ? 0 : factor * 0.25) : best[key] * factor);
        if (value === best[key] || (key === 'k1' && value <= 0) || (key.startsWith('b') && value > 1)) continue;
        const candidate = { ...best, [key]: value };
        const score = objective(evaluator.ranks(setting(candidate)), keep);
        if (score > bestScore + 1e-9) {
          best = candidate;
          bestScore = score;
          improved = true;
        }
      }
    }
    if (!improved) break;
  }
  return best;
}
const rounds = Number(process.env.ROUNDS ?? 2);
const heldOut = Object.fromEntries(SETS.map((set) => [set, new Array<number>(evaluator.lines[set].length)])) as Ranks;
for (let k = 0; k < FOLDS; k++) {
  const p = ascend((i) => fold(i) !== k, rounds);
  console.log(`fold ${k}:`, JSON.stringify(p));
  const r = evaluator.ranks(setting(p));
  for (const set of SETS) r[set].forEach((v, i) => fold(i) === k && (heldOut[set][i] = v));
}
const all = ascend(() => true, rounds);
console.log('all:', JSON.stringify(all));
const inSample = evaluator.ranks(setting(all));
const base = evaluator.ranks(DEFAULT_SETTING);
for (const set of SETS) {
  const f = (rr: number[]) => {
    const m = figures(rr);
    return `${m.recall1.toFixed(3)}/${m.recall5.toFixed(3)}/${m.mrr.toFixed(3)}`;
  };
  console.log(
    set.padEnd(16),
    'default',
    f(base[set]),
    ' tuned in-sample',
    f(inSample[set]),
    ' tuned CV',
    f(heldOut[set]),
  );
}
