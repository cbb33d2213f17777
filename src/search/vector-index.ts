import { Int8Rows } from './int8-dot.js';

/**
 * Unit vectors of a set of documents (by id) in 8 bits per dimension, in one array: the value of
 * dimension i of document d is row(d)[i] × scales[d]. A quarter of the memory of
 * float32, cosine error far below ranking noise, and no per-document objects. The dimensions are
 * those of the first vector set; a vector of another size is not kept.
 */
export class EmbeddingTable {
  private rows?: Int8Rows;
  /** 0: the document has no vector. */
  readonly scales: Float64Array;
  private scratch = new Float64Array(0);

  constructor(readonly count: number) {
    this.scales = new Float64Array(count);
  }

  get dimensions(): number {
    return this.rows?.dimensions ?? 0;
  }

  has(id: number): boolean {
    return this.scales[id] !== 0;
  }

  /** Document `id`'s 8-bit values (empty before the first vector is set). */
  row(id: number): Int8Array {
    return this.rows?.row(id) ?? new Int8Array(0);
  }

  set(id: number, vector: ArrayLike<number>): void {
    const rows = this.storage(vector.length);
    if (!rows) {
      return;
    }
    let max = 0;
    for (let i = 0; i < vector.length; i++) {
      max = Math.max(max, Math.abs(vector[i]));
    }
    const scale = max > 0 ? max / 127 : 1;
    const row = rows.row(id);
    for (let i = 0; i < vector.length; i++) {
      row[i] = Math.round(vector[i] / scale);
    }
    this.scales[id] = scale;
  }

  /** Copies document `from`'s vector of `source` (if it has one) to document `id`. */
  copy(id: number, source: EmbeddingTable, from: number): void {
    if (!source.has(from)) {
      return;
    }
    const rows = this.storage(source.dimensions);
    if (rows) {
      rows.row(id).set(source.row(from));
      this.scales[id] = source.scales[from];
    }
  }

  /** Cosine similarity of document `id` (which has a vector) with a unit query vector of the same dimensions. */
  similarity(id: number, query: Float32Array): number {
    return this.similarities([id], query)[0];
  }

  /**
   * Cosine similarities of the documents `ids` (each with a vector) with a unit query vector of the
   * same dimensions, in the order of `ids`; the returned array is reused by the next call.
   */
  similarities(ids: readonly number[], query: Float32Array): Float64Array {
    if (this.scratch.length < ids.length) {
      this.scratch = new Float64Array(Math.max(ids.length, this.scratch.length * 2));
    }
    const out = this.scratch;
    if (!this.rows) {
      out.fill(0, 0, ids.length);
      return out;
    }
    this.rows.dotProducts(ids, query, out);
    for (let k = 0; k < ids.length; k++) {
      out[k] *= this.scales[ids[k]];
    }
    return out;
  }

  private storage(dimensions: number): Int8Rows | undefined {
    this.rows ??= new Int8Rows(this.count, dimensions);
    return dimensions === this.rows.dimensions ? this.rows : undefined;
  }
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
 * exact similarity is then computed. Building is one pass to count and one to fill the lists (one
 * array for all, by dimension); a query reads a few percent of the data.
 */
export class VectorIndex {
  /** Documents listed under dimension d: entries offsets[d] to offsets[d + 1] of `listed`. */
  private readonly offsets: Uint32Array;
  /**
   * The ids of each dimension's list, in increasing order, as LEB128 varints of their gaps, from
   * byte idOffsets[d]: a list is always read whole, from its start. At 98,700 functions the gaps
   * average about 11, so the ids take 3.5 MB instead of 12.6 MB as 32-bit integers (2026-11-28).
   */
  private readonly idOffsets: Uint32Array;
  private readonly ids: Uint8Array;
  /** The listed dimension's 8-bit value, beside each id: a query reads both in order. */
  private readonly listed: Int8Array;
  private readonly partial: Float32Array;
  private readonly seen: Uint8Array;
  readonly dimensions: number;

  constructor(private readonly vectors: EmbeddingTable) {
    const dimensions = vectors.dimensions;
    this.dimensions = dimensions;
    const scratch = new Float32Array(dimensions);
    const offsets = new Uint32Array(dimensions + 1);
    const each = (visit: (dim: number, id: number, values: Int8Array) => void) => {
      for (let id = 0; id < vectors.count; id++) {
        if (vectors.has(id)) {
          const values = vectors.row(id);
          for (const dim of largest(values, DOCUMENT_DIMENSIONS, scratch)) {
            visit(dim, id, values);
          }
        }
      }
    };
    each((dim) => offsets[dim + 1]++);
    for (let dim = 0; dim < dimensions; dim++) {
      offsets[dim + 1] += offsets[dim];
    }
    this.offsets = offsets;
    // Documents are visited in id order, so each list's ids increase: a second pass sizes the gaps.
    const last = new Int32Array(dimensions).fill(-1);
    const idOffsets = new Uint32Array(dimensions + 1);
    each((dim, id) => {
      idOffsets[dim + 1] += varintBytes(id - last[dim]);
      last[dim] = id;
    });
    for (let dim = 0; dim < dimensions; dim++) {
      idOffsets[dim + 1] += idOffsets[dim];
    }
    this.idOffsets = idOffsets;
    this.ids = new Uint8Array(idOffsets[dimensions]);
    this.listed = new Int8Array(offsets[dimensions]);
    const next = offsets.slice(0, dimensions);
    const nextByte = idOffsets.slice(0, dimensions);
    last.fill(-1);
    each((dim, id, values) => {
      this.listed[next[dim]++] = values[dim];
      let gap = id - last[dim];
      last[dim] = id;
      while (gap >= 0x80) {
        this.ids[nextByte[dim]++] = (gap & 0x7f) | 0x80;
        gap >>>= 7;
      }
      this.ids[nextByte[dim]++] = gap;
    });
    this.partial = new Float32Array(vectors.count);
    this.seen = new Uint8Array(vectors.count);
  }

  /** Up to `count` allowed documents likely to be the most similar to the query, best first. */
  candidates(query: Float32Array, allowed: Uint8Array, count: number): number[] {
    if (query.length !== this.dimensions || this.dimensions === 0) {
      return [];
    }
    const { partial, seen, ids, listed } = this;
    const scales = this.vectors.scales;
    const touched: number[] = [];
    const dims = largest(query, QUERY_DIMENSIONS, new Float32Array(this.dimensions));
    dims.sort((a, b) => Math.abs(query[b]) - Math.abs(query[a]) || a - b);
    let budget = POSTINGS_BUDGET;
    for (const dim of dims) {
      const start = this.offsets[dim];
      const end = this.offsets[dim + 1];
      if (budget <= 0) {
        break;
      }
      budget -= end - start;
      const q = query[dim];
      let at = this.idOffsets[dim];
      let id = -1;
      for (let i = start; i < end; i++) {
        let gap = 0;
        let shift = 0;
        let byte: number;
        do {
          byte = ids[at++];
          gap |= (byte & 0x7f) << shift;
          shift += 7;
        } while (byte & 0x80);
        id += gap;
        if (allowed[id] === 0) {
          continue;
        }
        if (seen[id] === 0) {
          seen[id] = 1;
          touched.push(id);
        }
        partial[id] += q * Math.fround(listed[i] * scales[id]);
      }
    }
    const best = topByScore(touched, partial, count);
    for (const id of touched) {
      partial[id] = 0;
      seen[id] = 0;
    }
    return best;
  }
}

/** Bytes of `value` (≥ 0, < 2^31) as a LEB128 varint. */
function varintBytes(value: number): number {
  let bytes = 1;
  while (value >= 0x80) {
    value >>>= 7;
    bytes++;
  }
  return bytes;
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

/** Buckets of one radix-select pass: 16 bits of a score's 32-bit key. */
const RADIX = 1 << 16;
const histogram = new Uint32Array(RADIX);

/**
 * The `count` ids with the highest scores, best first, ties by id, without sorting all of them: a
 * radix select finds the `count`-th highest score, and only the ids at or above it are sorted. Each
 * score becomes a 32-bit key in the order of the scores; a histogram of the keys' high halves finds
 * the threshold's bucket, one of the low halves within that bucket the threshold itself. Unlike the
 * quickselect this replaced, nothing branches on a comparison. At 98,700 functions a search selects
 * the best 1,000 of about 61k lexical matches and the best 250 of about 29k approximate vector
 * matches: the in-process p50 went from 16.3–17.1 ms to 11.9–12.0 ms, rankings unchanged
 * (lab/profile-search.ts, load average 1.5–3.2, 2026-11-29).
 */
export function topByScore(ids: readonly number[], scores: Float32Array, count: number): number[] {
  const byScore = (a: number, b: number) => scores[b] - scores[a] || a - b;
  const n = ids.length;
  if (n <= count * 4 || n < 256) {
    return [...ids].sort(byScore).slice(0, count);
  }
  const keys = new Uint32Array(n);
  const values = new Float32Array(keys.buffer);
  for (let i = 0; i < n; i++) {
    // + 0 turns -0 into 0: the two are equal scores and must get equal keys.
    values[i] = scores[ids[i]] + 0;
  }
  for (let i = 0; i < n; i++) {
    // IEEE 754 bits in score order: negative scores' bits reversed, positive ones' above them.
    const bits = keys[i];
    keys[i] = bits & 0x80000000 ? ~bits : bits | 0x80000000;
  }
  const high = selectBucket(keys, count);
  const low = selectBucket(keys, high.rest, high.bucket);
  const threshold = ((high.bucket << 16) | low.bucket) >>> 0;
  const above: number[] = [];
  for (let i = 0; i < n; i++) {
    if (keys[i] >= threshold) {
      above.push(ids[i]);
    }
  }
  return above.sort(byScore).slice(0, count);
}

/**
 * The 16-bit bucket that holds the `count`-th highest key: of the keys' high halves, or (given
 * `high`) of the low halves of the keys whose high half is `high`; and that key's rank in its bucket.
 */
function selectBucket(keys: Uint32Array, count: number, high?: number): { bucket: number; rest: number } {
  histogram.fill(0);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (high === undefined) {
      histogram[key >>> 16]++;
    } else if (key >>> 16 === high) {
      histogram[key & 0xffff]++;
    }
  }
  let rest = count;
  let bucket = RADIX - 1;
  while (bucket > 0 && histogram[bucket] < rest) {
    rest -= histogram[bucket];
    bucket--;
  }
  return { bucket, rest };
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
