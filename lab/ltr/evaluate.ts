// Learning-to-rank, step 3: models fitted on the synthetic lists (synth.ts), applied to the default
// ranking's top K on the evaluation sets, with K, the model (training variant, L2) and the blend
// with the first-stage score chosen by 5-fold cross-validation over all five sets together
// (bench/search-quality.ts's crossValidate), each set reported in-sample and cross-validated.
// Usage: node dist-lab/lab/ltr/evaluate.js [groups.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  crossValidate,
  type Evaluator,
  figures,
  type Ranks,
  readAciCatalogue,
  readOpenApiCatalogue,
  SETS,
  type SetName,
  type Setting,
  withinAppLines,
} from '../../bench/search-quality.js';
import { type EvalLine, readJsonl, SHARED } from '../../bench/support.js';
import { loadWordVectors, WordNet } from '../../src/search/index.js';
import { type Candidate, type Catalogue, FEATURE_NAMES, Indexed } from './features.js';
import { type LinearModel, logLikelihood, score, train, type TrainList } from './model.js';
import type { Group } from './synth.js';
import { type TreeModel, trainTrees, treeScore } from './trees.js';

const GROUPS = process.argv[2] ?? 'dist-lab/ltr-groups.json';
const K_MAX = 50;
const wordnet = WordNet.open()!;
const vectors = loadWordVectors()!;

// Evaluation lines and their first-stage candidates.
const aci = readAciCatalogue(join(SHARED, 'catalogs', 'aci')) as unknown as Catalogue;
const imported = await readOpenApiCatalogue();
const aciIndex = new Indexed(aci, wordnet, vectors);
const withinIndex = new Indexed(imported as unknown as Catalogue, wordnet, vectors);
type Line = EvalLine & { app?: string };
const read = (name: string) => readJsonl(join(SHARED, 'eval', `${name}.jsonl`)) as Line[];
const lines: Record<SetName, Line[]> = {
  'functions-dev': read('functions-dev'),
  'functions-users': read('functions-users'),
  'apps-dev': read('apps-dev'),
  'apps-users': read('apps-users'),
  'within-app': withinAppLines(imported),
};
const rr = (names: string[], expected: string[]) => {
  const at = names.slice(0, 10).findIndex((n) => expected.includes(n));
  return at >= 0 ? 1 / (at + 1) : 0;
};
const appRanks = Object.fromEntries(
  (['apps-dev', 'apps-users'] as const).map((set) => [
    set,
    lines[set].map((line) =>
      rr(
        aciIndex.engine
          .rankApps({ intent: line.intent, vector: aciIndex.embed(line.intent), offset: 0, limit: 10 }, {})
          .map((h) => h.name),
        line.expected,
      ),
    ),
  ]),
) as Record<'apps-dev' | 'apps-users', number[]>;
const FUNCTION_SETS = ['functions-dev', 'functions-users', 'within-app'] as const;
const cands = Object.fromEntries(
  FUNCTION_SETS.map((set) => [
    set,
    lines[set].map((line) => (set === 'within-app' ? withinIndex : aciIndex).candidates(line.intent, line.app, K_MAX)),
  ]),
) as Record<(typeof FUNCTION_SETS)[number], Candidate[][]>;

// Headroom: the share of lines with an expected function among the first stage's top K.
for (const set of FUNCTION_SETS) {
  const at = (k: number) =>
    (
      cands[set].filter((list, i) => list.slice(0, k).some((c) => lines[set][i].expected.includes(c.name))).length /
      cands[set].length
    ).toFixed(3);
  console.log(`${set}: first stage recall@5/10/20/30/50 ${[5, 10, 20, 30, 50].map(at).join('/')}`);
}

// Models.
const groups = JSON.parse(readFileSync(GROUPS, 'utf8')) as Group[];
type AnyModel = LinearModel | TreeModel;
const apply = (model: AnyModel, x: number[]) => ('trees' in model ? treeScore(model, x) : score(model, x));
const models: { label: string; model: AnyModel }[] = [];
const TREES = process.env.MODEL === 'trees';
const variants: Record<string, (g: Group) => boolean> = {
  'literal+bridge': () => true,
  'summary only': (g) => g.variant === 'literal' && g.view === 'summary',
};
// Feature subsets: all, or only what the first stage does not already weigh (the structure of the
// operation against the intent's action and nouns), beside the first-stage score itself.
const STRUCTURAL = new Set([
  's1',
  'rr',
  'cos',
  'last segment',
  'segments matched',
  'path params',
  'depth',
  'plural noun on collection',
  'singular noun on item',
]);
const subsets: Record<string, boolean[]> = {
  all: FEATURE_NAMES.map(() => true),
  structural: FEATURE_NAMES.map((n) => STRUCTURAL.has(n) || /^\w+x\w+$/.test(n)),
};
const masked = (mask: boolean[]) => (x: number[]) => x.map((v, j) => (mask[j] ? v : 0));
// Lists cut to the first stage's top `depth`: the hard negatives, the ones a re-ranker of the top K reorders.
for (const [variant, keep] of Object.entries(variants)) {
  for (const [subset, mask] of Object.entries(subsets)) {
    for (const depth of (process.env.DEPTHS ?? '50').split(',').map(Number)) {
      const lists: TrainList[] = groups
        .filter((g) => keep(g) && g.label < depth && g.candidates.length > 1)
        .map((g) => ({ label: g.label, candidates: g.candidates.slice(0, depth).map(masked(mask)) }));
      const l2 = 1e-3;
      for (const offset of (process.env.OFFSETS ?? '0,5,20').split(',').map(Number)) {
        const t = performance.now();
        if (TREES) {
          const model = trainTrees(lists, { trees: 100, depth: 3, rate: 0.1, minHessian: 5, offset, l2: 1 });
          console.log(`trees ${variant} ${subset} offset ${offset}: ${((performance.now() - t) / 1000).toFixed(0)} s`);
          models.push({ label: `trees ${variant} ${subset}${offset ? ` residual ${offset}` : ''}`, model });
          continue;
        }
        const model = train(lists, { l2, epochs: Number(process.env.EPOCHS ?? 150), rate: 0.05, offset });
        console.log(
          `model ${variant} ${subset} top ${depth} offset ${offset}: ${lists.length} lists, log-likelihood ${logLikelihood(model, lists).toFixed(3)}, ${((performance.now() - t) / 1000).toFixed(0)} s`,
        );
        models.push({ label: `${variant} ${subset} top ${depth}${offset ? ` residual ${offset}` : ''}`, model });
      }
    }
  }
}
writeFileSync('dist-lab/ltr-models.json', JSON.stringify({ features: FEATURE_NAMES, models }, null, 1));

// Settings: the default (no re-ranking) and every (model, K, blend, scope).
interface Rerank {
  model: AnyModel;
  k: number;
  /** Weight of the model's score next to the first-stage score divided by the best one; Infinity: the model alone. */
  blend: number;
  withinOnly: boolean;
}
const rerankRanks = (r: Rerank | undefined): Ranks => {
  const out = { ...appRanks } as Ranks;
  for (const set of FUNCTION_SETS) {
    out[set] = cands[set].map((list, i) => {
      const expected = lines[set][i].expected;
      if (!r || (r.withinOnly && set !== 'within-app'))
        return rr(
          list.map((c) => c.name),
          expected,
        );
      const top = list.slice(0, r.k);
      const s1max = top[0]?.s1 || 1;
      const scored = top.map((c, at) => ({
        name: c.name,
        at,
        s: r.blend === Infinity ? apply(r.model, c.features) : c.s1 / s1max + r.blend * apply(r.model, c.features),
      }));
      scored.sort((a, b) => b.s - a.s || a.at - b.at);
      return rr([...scored.map((c) => c.name), ...list.slice(r.k).map((c) => c.name)], expected);
    });
  }
  return out;
};
const settings: (Setting & { rerank?: Rerank })[] = [{ label: 'default', engine: {} }];
for (const { label, model } of models) {
  for (const k of [5, 10, 20, 30]) {
    for (const blend of model.offset ? [Infinity] : [0.02, 0.05, 0.1, 0.2, 0.5, 1, Infinity]) {
      for (const withinOnly of [false, true]) {
        settings.push({
          label: `${label}, K ${k}, blend ${blend}${withinOnly ? ', within-app only' : ''}`,
          engine: {},
          rerank: { model, k, blend, withinOnly },
        });
      }
    }
  }
}
const cache = new Map<string, Ranks>();
const evaluator = {
  lines,
  hasWordVectors: true,
  ranks: (s: Setting & { rerank?: Rerank }) => {
    let r = cache.get(s.label);
    if (!r) {
      r = rerankRanks(s.rerank);
      cache.set(s.label, r);
    }
    return r;
  },
} as unknown as Evaluator;
const three = (x: number[]) => {
  const m = figures(x);
  return `${m.recall1.toFixed(3)} ${m.recall5.toFixed(3)} ${m.mrr.toFixed(3)}`;
};
const cv = crossValidate(settings, evaluator);
const base = evaluator.ranks(settings[0]);
console.log(`\n${settings.length} settings; best on all lines: ${cv.best.label}`);
cv.chosen.forEach((s, k) => console.log(`  chosen without fold ${k}: ${s.label}`));
console.log('\nset              default R@1 R@5 MRR   | re-ranked in-sample R@1 R@5 MRR | CV R@1 R@5 MRR');
for (const set of SETS) {
  console.log(`${set.padEnd(16)} ${three(base[set])} | ${three(cv.bestRanks[set])} | ${three(cv.heldOut[set])}`);
}
const best = (cv.best as Setting & { rerank?: Rerank }).rerank;
if (best && 'weights' in best.model) {
  const weights = best.model.weights;
  console.log('\nweights of the best model (standardised features):');
  FEATURE_NAMES.forEach((name, j) => Math.abs(weights[j]) > 0.05 && console.log(`  ${name}: ${weights[j]}`));
}
// A few fixed settings of each model, every function set (no choice made: for reading, not for picking).
console.log('\nfixed settings (functions-dev | functions-users | within-app, R@1 R@5 MRR):');
for (const s of settings.filter(
  (x) => x.rerank && !x.rerank.withinOnly && [10, 30].includes(x.rerank.k) && [0.2, Infinity].includes(x.rerank.blend),
)) {
  const r = evaluator.ranks(s);
  console.log(`  ${s.label.padEnd(48)} ${FUNCTION_SETS.map((set) => three(r[set])).join(' | ')}`);
}
// Every model at its best K/blend (in-sample), for the record.
for (const { label } of models) {
  const mine = settings.filter((s) => s.label.startsWith(label + ',') && !s.rerank?.withinOnly);
  const c = crossValidate([settings[0], ...mine], evaluator);
  console.log(`\n${label}: best ${c.best.label}`);
  for (const set of FUNCTION_SETS)
    console.log(`  ${set.padEnd(16)} in-sample ${three(c.bestRanks[set])} | CV ${three(c.heldOut[set])}`);
}
