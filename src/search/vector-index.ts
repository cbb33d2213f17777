/** A unit vector stored in 8 bits per dimension: the value of dimension i is values[i] × scale. */
export interface QuantizedVector {
  values: Int8Array;
  scale: number;
}

/** 8-bit quantisation: a quarter of the memory of float32, cosine error far below ranking noise. */
export function quantize(vector: Float32Array): QuantizedVector {
  let max = 0;
  for (const value of vector) {
    max = Math.max(max, Math.abs(value));
  }
  const scale = max > 0 ? max / 127 : 1;
  const values = new Int8Array(vector.length);
  for (let i = 0; i < vector.length; i++) {
    values[i] = Math.round(vector[i] / scale);
  }
  return { values, scale };
}

export function similarity(vector: QuantizedVector, query: Float32Array): number {
  const values = vector.values;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i] * query[i];
  }
  return sum * vector.scale;
}

/** Dimensions kept per document, and looked up per query, by the approximate search. */
const DOCUMENT_DIMENSIONS = 32;
const QUERY_DIMENSIONS = 32;
/** Postings a query reads at most: its dimensions are taken by decreasing magnitude until then. */
const POSTINGS_BUDGET = 30_000;

/**
 * Approximate maximum inner product search without training: each document is listed under its
 * largest dimensions (by magnitude), and a query adds up, over its own largest dimensions, the
 * products with the documents listed there. The best of these partial sums are candidates whose
 * exact similarity is then computed. Building is one pass; a query reads a few percent of the data.
 */
export class VectorIndex {
  private readonly lists: { ids: Int32Array; values: Float32Array }[];
  private readonly partial: Float32Array;
  private readonly seen: Uint8Array;

  constructor(
    private readonly vectors: readonly (QuantizedVector | undefined)[],
    readonly dimensions: number,
  ) {
    const ids: number[][] = Array.from({ length: dimensions }, () => []);
    const values: number[][] = Array.from({ length: dimensions }, () => []);
    const scratch = new Float32Array(dimensions);
    vectors.forEach((vector, id) => {
      if (!vector || vector.values.length !== dimensions) {
        return;
      }
      for (const dim of largest(vector.values, DOCUMENT_DIMENSIONS, scratch)) {
        ids[dim].push(id);
        values[dim].push(vector.values[dim] * vector.scale);
      }
    });
    this.lists = ids.map((list, dim) => ({ ids: Int32Array.from(list), values: Float32Array.from(values[dim]) }));
    this.partial = new Float32Array(vectors.length);
    this.seen = new Uint8Array(vectors.length);
  }

  /** Up to `count` allowed documents likely to be the most similar to the query, best first. */
  candidates(query: Float32Array, allowed: Uint8Array, count: number): number[] {
    if (query.length !== this.dimensions) {
      return [];
    }
    const { partial, seen } = this;
    const touched: number[] = [];
    const dims = largest(query, QUERY_DIMENSIONS, new Float32Array(this.dimensions));
    dims.sort((a, b) => Math.abs(query[b]) - Math.abs(query[a]) || a - b);
    let budget = POSTINGS_BUDGET;
    for (const dim of dims) {
      const { ids, values } = this.lists[dim];
      if (budget <= 0) {
        break;
      }
      budget -= ids.length;
      const q = query[dim];
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i];
        if (allowed[id] === 0) {
          continue;
        }
        if (seen[id] === 0) {
          seen[id] = 1;
          touched.push(id);
        }
        partial[id] += q * values[i];
      }
    }
    const best = topByScore(touched, partial, count);
    for (const id of touched) {
      partial[id] = 0;
      seen[id] = 0;
    }
    return best;
  }

  vector(id: number): QuantizedVector | undefined {
    const vector = this.vectors[id];
    return vector && vector.values.length === this.dimensions ? vector : undefined;
  }
}

/** Indexes of the `count` largest magnitudes of `values`, in increasing index order. */
function largest(values: ArrayLike<number>, count: number, scratch: Float32Array): number[] {
  const n = values.length;
  const k = Math.min(count, n);
  for (let i = 0; i < n; i++) {
    scratch[i] = Math.abs(values[i]);
  }
  const threshold = kthLargest(scratch.subarray(0, n), k);
  const out: number[] = [];
  for (let i = 0; i < n && out.length < k; i++) {
    if (Math.abs(values[i]) >= threshold) {
      out.push(i);
    }
  }
  return out;
}

/**
 * The `count` ids with the highest scores, best first, ties by id, without sorting all of them:
 * a selection finds the threshold, and only the ids at or above it are sorted.
 */
export function topByScore(ids: readonly number[], scores: Float32Array, count: number): number[] {
  const byScore = (a: number, b: number) => scores[b] - scores[a] || a - b;
  const n = ids.length;
  if (n <= count * 4 || n < 256) {
    return [...ids].sort(byScore).slice(0, count);
  }
  const values = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    values[i] = scores[ids[i]];
  }
  const threshold = kthLargest(values, count);
  const above: number[] = [];
  for (let i = 0; i < n; i++) {
    if (scores[ids[i]] >= threshold) {
      above.push(ids[i]);
    }
  }
  return above.sort(byScore).slice(0, count);
}

/** The k-th largest value (1-based), by quickselect; reorders `values`. */
function kthLargest(values: Float32Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i] > pivot) {
        i++;
      }
      while (values[j] < pivot) {
        j--;
      }
      if (i <= j) {
        const t = values[i];
        values[i] = values[j];
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) {
      hi = j;
    } else if (target >= i) {
      lo = i;
    } else {
      break;
    }
  }
  return values[target];
}
