// Word associations of API language, counted in the APIs.guru directory: for each stem, the stems
// that share operations (summary and description) with it in the most documents, by PPMI.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stems } from '../src/search/text-analysis.js';

const root = process.argv[2];
const out = process.argv[3] ?? '/tmp/assoc.json';
const MIN_DOCS = Number(process.env.MIN_DOCS ?? 8);
const MIN_PAIR = Number(process.env.MIN_PAIR ?? 5);
const TOP = Number(process.env.TOP ?? 10);
const PER_OP = 30;
function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (name.endsWith('.json') && !name.startsWith('_')) yield p;
  }
}
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
// Pass 1: per document, the set of stems of each operation.
const docs: string[][][] = [];
for (const file of files(root)) {
  let doc: any;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    continue;
  }
  const ops: string[][] = [];
  for (const item of Object.values(doc?.paths ?? {}) as any[]) {
    for (const m of METHODS) {
      const op = item?.[m];
      if (!op) continue;
      const text = `${op.summary ?? ''} ${typeof op.description === 'string' ? op.description.slice(0, 400) : ''}`;
      const set = [...new Set(stems(text).filter((s) => /^[a-z]{3,}$/.test(s)))].slice(0, PER_OP);
      if (set.length > 1) ops.push(set);
    }
  }
  if (ops.length) docs.push(ops);
}
console.error('documents', docs.length);
// Document frequency of stems (a stem counts once per document).
const df = new Map<string, number>();
for (const ops of docs) for (const s of new Set(ops.flat())) df.set(s, (df.get(s) ?? 0) + 1);
const vocab = [...df]
  .filter(([, n]) => n >= MIN_DOCS)
  .map(([s]) => s)
  .sort();
const id = new Map(vocab.map((s, i) => [s, i]));
console.error('vocabulary', vocab.length);
// Pair counts: a pair counts once per document where some operation holds both.
const pairs = new Map<number, number>();
const V = vocab.length;
for (const ops of docs) {
  const seen = new Set<number>();
  for (const op of ops) {
    const ids = op.map((s) => id.get(s)).filter((x): x is number => x !== undefined);
    for (let i = 0; i < ids.length; i++)
      for (let j = 0; j < ids.length; j++) if (i !== j) seen.add(ids[i] * V + ids[j]);
  }
  for (const key of seen) pairs.set(key, (pairs.get(key) ?? 0) + 1);
}
console.error('pairs', pairs.size);
const N = docs.length;
const lists = new Map<number, [number, number][]>();
for (const [key, c] of pairs) {
  if (c < MIN_PAIR) continue;
  const a = Math.floor(key / V),
    b = key % V;
  const pmi = Math.log((c * N) / (df.get(vocab[a])! * df.get(vocab[b])!));
  if (pmi <= 0) continue;
  let list = lists.get(a);
  if (!list) lists.set(a, (list = []));
  list.push([b, pmi]);
}
const result: Record<string, [string, number][]> = {};
for (const [a, list] of lists) {
  list.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  result[vocab[a]] = list.slice(0, TOP).map(([b, pmi]) => [vocab[b], Math.round(pmi * 100) / 100]);
}
writeFileSync(out, JSON.stringify(result));
console.error('stems with associations', Object.keys(result).length);
