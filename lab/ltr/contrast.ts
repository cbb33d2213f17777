// Diagnostic: where the first stage puts a wrong function first and the right one within its top 20,
// the mean of (right - first) per feature, on the synthetic lists and on each function set. A feature
// whose sign differs between the two is one the synthetic lists teach the wrong way for that set.
// Usage: node dist-lab/lab/ltr/contrast.js [groups.json]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAciCatalogue, readOpenApiCatalogue, withinAppLines } from '../../bench/search-quality.js';
import { type EvalLine, readJsonl, SHARED } from '../../bench/support.js';
import { loadWordVectors, WordNet } from '../../src/search/index.js';
import { type Catalogue, FEATURE_NAMES, Indexed } from './features.js';
import type { Group } from './synth.js';

const groups = JSON.parse(readFileSync(process.argv[2] ?? 'dist-lab/ltr-groups.json', 'utf8')) as Group[];
const wordnet = WordNet.open()!;
const vectors = loadWordVectors()!;
const aci = new Indexed(readAciCatalogue(join(SHARED, 'catalogs', 'aci')) as unknown as Catalogue, wordnet, vectors);
const imported = await readOpenApiCatalogue();
const within = new Indexed(imported as unknown as Catalogue, wordnet, vectors);
type Line = EvalLine & { app?: string };
const pairs: Record<string, [number[], number[]][]> = {
  synthetic: [],
  'functions-dev': [],
  'functions-users': [],
  'within-app': [],
};
for (const g of groups) if (g.label > 0 && g.label < 20) pairs.synthetic.push([g.candidates[g.label], g.candidates[0]]);
const sets: [string, Indexed, Line[]][] = [
  ['functions-dev', aci, readJsonl(join(SHARED, 'eval', 'functions-dev.jsonl')) as Line[]],
  ['functions-users', aci, readJsonl(join(SHARED, 'eval', 'functions-users.jsonl')) as Line[]],
  ['within-app', within, withinAppLines(imported)],
];
for (const [set, index, lines] of sets) {
  for (const line of lines) {
    const list = index.candidates(line.intent, line.app, 20);
    const at = list.findIndex((c) => line.expected.includes(c.name));
    if (at > 0) pairs[set].push([list[at].features, list[0].features]);
  }
}
console.log(
  `pairs: ${Object.entries(pairs)
    .map(([k, v]) => `${k} ${v.length}`)
    .join(', ')}`,
);
console.log(
  `feature`.padEnd(28) +
    Object.keys(pairs)
      .map((k) => k.padStart(16))
      .join(''),
);
FEATURE_NAMES.forEach((name, j) => {
  const means = Object.values(pairs).map((p) => p.reduce((s, [a, b]) => s + a[j] - b[j], 0) / (p.length || 1));
  if (means.some((m) => Math.abs(m) > 0.02)) {
    console.log(name.padEnd(28) + means.map((m) => m.toFixed(3).padStart(16)).join(''));
  }
});
