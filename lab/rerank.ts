// Prototype: re-rank the default's top N by word-level soft matching (MaxSim over word vectors).
import { createEvaluator, DEFAULT_SETTING, figures, SETS, type SetName } from '../bench/search-quality.js';
import { words } from '../src/search/text-analysis.js';
import { normalize } from '../src/search/embeddings/embedding-provider.js';
import { functionLocalName, operationText } from '../src/search/search-document.js';

const N = Number(process.env.N ?? 30);
const evaluator = await createEvaluator();
const vectors = evaluator.vectors!;
const unit = new Map<string, Float32Array | null>();
const vec = (w: string) => {
  let v = unit.get(w);
  if (v === undefined) {
    const raw = vectors.vector(w);
    if (raw) {
      for (let i = 0; i < raw.length; i++) raw[i] -= vectors.mean[i];
    }
    v = raw ? normalize(raw) : null;
    unit.set(w, v);
  }
  return v;
};
const cos = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const harmonic = Math.log(vectors.size) + 0.5772;
const weightOf = (w: string) => {
  const r = vectors.rank(w);
  if (r === undefined) return 1;
  const p = 1 / ((r + 1) * harmonic);
  return 1e-4 / (1e-4 + p);
};
function docWords(item: { text: any; operation?: string }): string[] {
  const t = item.text;
  const parts = [t.display_name ?? '', t.name.includes('__') ? functionLocalName(t.name) : t.name, t.description ?? ''];
  if (t.protocol_data) parts.push(operationText(t.protocol_data));
  return [...new Set(words(parts.join(' ')))];
}
function soft(intent: string, dw: string[], floor: number): number {
  let total = 0,
    sum = 0;
  for (const w of new Set(words(intent))) {
    const weight = weightOf(w);
    const qv = vec(w);
    let best = 0;
    if (dw.includes(w)) best = 1;
    else if (qv)
      for (const d of dw) {
        const dv = vec(d);
        if (dv) best = Math.max(best, cos(qv, dv));
      }
    total += weight;
    sum += (weight * Math.max(0, best - floor)) / (1 - floor);
  }
  return total ? sum / total : 0;
}
const hitsCache = new Map<string, { name: string }[]>();
for (const set of SETS) {
  const texts = evaluator.texts(set);
  const lines = evaluator.lines[set];
  const all = lines.map((_, i) => evaluator.hits(DEFAULT_SETTING, set, i, N));
  const recallN = all.filter((h, i) => h.some((x) => lines[i].expected.includes(x.name))).length / lines.length;
  const out: string[] = [`${set} R@${N}=${recallN.toFixed(3)}`];
  for (const floor of [0.2, 0.4])
    for (const lambda of [0, 0.5, 1, 2, 4]) {
      const rr = lines.map((line, i) => {
        const scored = all[i].map((h, pos) => ({
          name: h.name,
          s: 1 / (pos + 1) ** 0.5 + lambda * soft(line.intent, docWords(texts.get(h.name)!), floor),
        }));
        scored.sort((a, b) => b.s - a.s);
        const at = scored.slice(0, 10).findIndex((x) => line.expected.includes(x.name));
        return at >= 0 ? 1 / (at + 1) : 0;
      });
      const f = figures(rr);
      out.push(`f${floor} λ${lambda}: ${f.recall1.toFixed(3)}/${f.recall5.toFixed(3)}/${f.mrr.toFixed(3)}`);
    }
  console.log(out.join('\n  '));
}
