// Learns, from the APIs.guru directory's operations (lab/directory-pairs.ts), a linear projection W on the
// shipped word vectors and/or per-word weights replacing SIF, contrastively (InfoNCE, in-batch negatives,
// batches grouped by document so that operations of one API are each other's hard negatives). Plain
// TypeScript, seeded, deterministic.
//
// Sentence vector: e = normalize(W · Σ_r w_r u_r), u_r = P(v_r − mean) (the shipped vector, centred, top
// components removed), w_r = sif_r · exp(b_r). W starts at the identity and b at 0: the shipped sentence vector.
import { operationText } from '../src/search/search-document.js';
import { words } from '../src/search/text-analysis.js';
import { type WordVectors } from '../src/search/embeddings/word-vectors.js';
import { SENTENCE_VECTOR_DEFAULTS } from '../src/search/embeddings/word-vectors.js';
import type { DirectoryDocument } from './directory-pairs.js';

export type PairKind = 'sd' | 'sp' | 'si' | 'ts';

export interface TrainOptions {
  pairs: PairKind[];
  /** Output dimension of W (100: square). */
  dims: number;
  epochs: number;
  temperature: number;
  batch: number;
  /** Pairs of one document placed together in a batch (1: random batches). */
  group: number;
  /** Within a document, operations on one resource (path) next to each other: siblings as hard negatives. */
  byResource: boolean;
  learnW: boolean;
  learnWeights: boolean;
  lr: number;
  /** L2 pull of the log-weights toward 0 per step. */
  weightDecay: number;
  seed: number;
  /** Cap on the pairs used (0: all). */
  maxPairs: number;
}

export const TRAIN_DEFAULTS: TrainOptions = {
  pairs: ['sd', 'sp', 'si'],
  dims: 100,
  epochs: 2,
  temperature: 0.05,
  batch: 256,
  group: 8,
  byResource: false,
  learnW: true,
  learnWeights: true,
  lr: 1e-3,
  weightDecay: 0,
  seed: 1,
  maxPairs: 0,
};

/** Mulberry32: a small seeded generator, the same sequence on every machine. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(list: T[], rand: () => number): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/** Fixed inputs of training: centred, projected word vectors and SIF weights. */
export class Basis {
  readonly d: number;
  readonly u: Float32Array;
  readonly sif: Float32Array;
  constructor(readonly vectors: WordVectors) {
    const d = (this.d = vectors.dimensions);
    const n = vectors.size;
    this.u = new Float32Array(n * d);
    this.sif = new Float32Array(n);
    const harmonic = Math.log(n) + 0.5772;
    const components = vectors.components.slice(0, SENTENCE_VECTOR_DEFAULTS.removeComponents);
    const row = new Float32Array(d);
    for (let r = 0; r < n; r++) {
      row.fill(0);
      vectors.addTo(r, 1, row);
      for (let i = 0; i < d; i++) row[i] -= vectors.mean[i];
      for (const c of components) {
        let p = 0;
        for (let i = 0; i < d; i++) p += row[i] * c[i];
        for (let i = 0; i < d; i++) row[i] -= p * c[i];
      }
      this.u.set(row, r * d);
      const p = 1 / ((r + 1) * harmonic);
      this.sif[r] = SENTENCE_VECTOR_DEFAULTS.sifA / (SENTENCE_VECTOR_DEFAULTS.sifA + p);
    }
  }

  tokens(text: string): Int32Array {
    const out: number[] = [];
    for (const word of words(text)) {
      const rank = this.vectors.rank(word);
      if (rank !== undefined) out.push(rank);
    }
    return Int32Array.from(out);
  }
}

interface Pair {
  a: Int32Array;
  b: Int32Array;
  /** The operation's resource: its path's literal segments. */
  resource: string;
}

/** Identifier words: `listPetsByOwner` → "list pets by owner", `pets_list` → "pets list". */
const identifierWords = (id: string) => id.replace(/[_\-.]+/g, ' ');

export function buildPairs(docs: DirectoryDocument[], basis: Basis, kinds: PairKind[]): Pair[][] {
  const seen = new Set<string>();
  const out: Pair[][] = [];
  for (const doc of docs) {
    const pairs: Pair[] = [];
    let resource = '';
    const add = (x: string, y: string) => {
      if (!x || !y || x === y) return;
      const key = `${x}\u0000${y}`;
      if (seen.has(key)) return;
      seen.add(key);
      const a = basis.tokens(x);
      const b = basis.tokens(y);
      if (a.length > 0 && b.length > 0) pairs.push({ a, b, resource });
    };
    for (const op of doc.operations) {
      const s = op.summary;
      if (!s) continue;
      resource = op.path
        .split('/')
        .filter((segment) => segment && !segment.startsWith('{'))
        .join('/');
      if (kinds.includes('sd')) add(s, op.description);
      if (kinds.includes('sp')) add(s, operationText({ method: op.method, path: op.path }));
      if (kinds.includes('si')) add(s, identifierWords(op.operationId));
      if (kinds.includes('ts')) add(`${doc.title} ${op.tags.join(' ')}`, s);
    }
    if (pairs.length > 0) out.push(pairs);
  }
  return out;
}

export interface Model {
  dims: number;
  /** dims × d, row-major. */
  W: Float32Array;
  /** Per word: log of the factor on its SIF weight. */
  b: Float32Array;
}

class Adam {
  private m: Float32Array;
  private v: Float32Array;
  private t = 0;
  constructor(
    private readonly x: Float32Array,
    private readonly lr: number,
  ) {
    this.m = new Float32Array(x.length);
    this.v = new Float32Array(x.length);
  }
  step(g: Float32Array): void {
    this.t++;
    const b1 = 0.9;
    const b2 = 0.999;
    const c1 = 1 - b1 ** this.t;
    const c2 = 1 - b2 ** this.t;
    for (let i = 0; i < this.x.length; i++) {
      const gi = g[i];
      this.m[i] = b1 * this.m[i] + (1 - b1) * gi;
      this.v[i] = b2 * this.v[i] + (1 - b2) * gi * gi;
      this.x[i] -= (this.lr * (this.m[i] / c1)) / (Math.sqrt(this.v[i] / c2) + 1e-8);
    }
  }
}

export async function train(
  docs: DirectoryDocument[],
  basis: Basis,
  options: TrainOptions,
  onEpoch: (model: Model, epoch: number) => Promise<void> | void = () => undefined,
  log: (line: string) => void = console.log,
): Promise<Model> {
  const rand = random(options.seed);
  const d = basis.d;
  const k = options.dims;
  const n = basis.vectors.size;
  const W = new Float32Array(k * d);
  for (let i = 0; i < Math.min(k, d); i++) W[i * d + i] = 1;
  const b = new Float32Array(n);
  const byDoc = buildPairs(docs, basis, options.pairs);
  let total = byDoc.reduce((sum, list) => sum + list.length, 0);
  log(`pairs ${total} from ${byDoc.length} documents`);
  const adamW = new Adam(W, options.lr);
  const adamB = new Adam(b, options.lr * 10);
  const gW = new Float32Array(k * d);
  const gB = new Float32Array(n);
  const B = options.batch;
  const S = new Float32Array(2 * B * d);
  const Z = new Float32Array(2 * B * k);
  const E = new Float32Array(2 * B * k);
  const N = new Float32Array(2 * B);
  const dE = new Float32Array(2 * B * k);
  const logits = new Float32Array(B * B);
  const G = new Float32Array(B * B);
  const dz = new Float32Array(k);
  const ds = new Float32Array(d);
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const groups: Pair[][] = [];
    for (const list of byDoc) {
      const copy = shuffle([...list], rand);
      if (options.byResource) copy.sort((x, y) => (x.resource < y.resource ? -1 : x.resource > y.resource ? 1 : 0));
      for (let i = 0; i < copy.length; i += options.group) groups.push(copy.slice(i, i + options.group));
    }
    let order = shuffle(groups, rand).flat();
    if (options.maxPairs > 0) order = order.slice(0, options.maxPairs);
    total = order.length;
    let lossSum = 0;
    let batches = 0;
    for (let start = 0; start + B <= order.length; start += B) {
      const batch = order.slice(start, start + B);
      const texts = [...batch.map((p) => p.a), ...batch.map((p) => p.b)];
      // Forward.
      S.fill(0);
      texts.forEach((tokens, t) => {
        const so = t * d;
        for (const r of tokens) {
          const w = basis.sif[r] * Math.exp(b[r]);
          const uo = r * d;
          for (let i = 0; i < d; i++) S[so + i] += w * basis.u[uo + i];
        }
        let norm = 0;
        for (let a = 0; a < k; a++) {
          let z = 0;
          const wo = a * d;
          for (let i = 0; i < d; i++) z += W[wo + i] * S[so + i];
          Z[t * k + a] = z;
          norm += z * z;
        }
        norm = Math.sqrt(norm) || 1e-12;
        N[t] = norm;
        for (let a = 0; a < k; a++) E[t * k + a] = Z[t * k + a] / norm;
      });
      const tau = options.temperature;
      for (let i = 0; i < B; i++) {
        for (let j = 0; j < B; j++) {
          let dot = 0;
          const qo = i * k;
          const po = (B + j) * k;
          for (let a = 0; a < k; a++) dot += E[qo + a] * E[po + a];
          logits[i * B + j] = dot / tau;
        }
      }
      // Symmetric InfoNCE: G = dL/dlogits. One direction: each anchor a's softmax over b of
      // logits[a * across + b * along], whose target is b = a; queries to passages (B, 1), then passages to queries (1, B).
      G.fill(0);
      const direction = (across: number, along: number): number => {
        let part = 0;
        for (let a = 0; a < B; a++) {
          let max = -Infinity;
          for (let b = 0; b < B; b++) max = Math.max(max, logits[a * across + b * along]);
          let sum = 0;
          for (let b = 0; b < B; b++) sum += Math.exp(logits[a * across + b * along] - max);
          part += max + Math.log(sum) - logits[a * across + a * along];
          for (let b = 0; b < B; b++)
            G[a * across + b * along] += Math.exp(logits[a * across + b * along] - max) / sum / (2 * B);
          G[a * across + a * along] -= 1 / (2 * B);
        }
        return part;
      };
      const loss = direction(B, 1) + direction(1, B);
      lossSum += loss / (2 * B);
      batches++;
      dE.fill(0);
      for (let i = 0; i < B; i++) {
        for (let j = 0; j < B; j++) {
          const g = G[i * B + j] / tau;
          if (g === 0) continue;
          const qo = i * k;
          const po = (B + j) * k;
          for (let a = 0; a < k; a++) {
            dE[qo + a] += g * E[po + a];
            dE[po + a] += g * E[qo + a];
          }
        }
      }
      // Backward through the normalisation, W and the weights.
      gW.fill(0);
      if (options.learnWeights) gB.fill(0);
      texts.forEach((tokens, t) => {
        const eo = t * k;
        let ed = 0;
        for (let a = 0; a < k; a++) ed += E[eo + a] * dE[eo + a];
        for (let a = 0; a < k; a++) dz[a] = (dE[eo + a] - E[eo + a] * ed) / N[t];
        const so = t * d;
        ds.fill(0);
        for (let a = 0; a < k; a++) {
          const g = dz[a];
          const wo = a * d;
          for (let i = 0; i < d; i++) {
            gW[wo + i] += g * S[so + i];
            ds[i] += W[wo + i] * g;
          }
        }
        if (options.learnWeights) {
          for (const r of tokens) {
            const uo = r * d;
            let dot = 0;
            for (let i = 0; i < d; i++) dot += basis.u[uo + i] * ds[i];
            gB[r] += basis.sif[r] * Math.exp(b[r]) * dot;
          }
        }
      });
      if (options.learnW) adamW.step(gW);
      if (options.learnWeights) {
        if (options.weightDecay > 0) for (let r = 0; r < n; r++) gB[r] += options.weightDecay * b[r];
        adamB.step(gB);
      }
      if (batches % 200 === 0) log(`epoch ${epoch + 1} batch ${batches} loss ${(lossSum / batches).toFixed(4)}`);
    }
    log(`epoch ${epoch + 1}: ${total} pairs, mean loss ${(lossSum / Math.max(batches, 1)).toFixed(4)}`);
    await onEpoch({ dims: k, W, b }, epoch + 1);
  }
  return { dims: k, W, b };
}
