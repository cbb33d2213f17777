/**
 * Interned terms: documents and indexes hold small integers instead of strings, which keeps a
 * 100k-function index in tens of megabytes.
 */
export class TermDictionary {
  private readonly ids = new Map<string, number>();
  private readonly list: string[] = [];

  intern(term: string): number {
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.list.length;
      this.ids.set(term, id);
      this.list.push(term);
    }
    return id;
  }

  id(term: string): number | undefined {
    return this.ids.get(term);
  }

  term(id: number): string {
    return this.list[id];
  }

  get size(): number {
    return this.list.length;
  }

  /** The fields' terms as ids, packed (see `PackedTerms`). */
  pack(fields: readonly (readonly string[])[]): PackedTerms {
    let total = fields.length;
    for (const terms of fields) {
      total += terms.length;
    }
    const packed = new Int32Array(total);
    let at = fields.length;
    fields.forEach((terms, field) => {
      packed[field] = terms.length;
      for (const term of terms) {
        packed[at++] = this.intern(term);
      }
    });
    return packed;
  }
}

/**
 * The term ids of one document in a single array: the length of each field first, then the fields'
 * terms one after the other. One small array per document instead of one per field saves most of
 * the per-object overhead of a large catalogue.
 */
export type PackedTerms = Int32Array;

/** Packs term-id lists (one per field). */
export function packIds(fields: readonly ArrayLike<number>[]): PackedTerms {
  let total = fields.length;
  for (const terms of fields) {
    total += terms.length;
  }
  const packed = new Int32Array(total);
  let at = fields.length;
  fields.forEach((terms, field) => {
    packed[field] = terms.length;
    packed.set(terms, at);
    at += terms.length;
  });
  return packed;
}

/** The terms of field number `field` (a view, not a copy). */
export function fieldTerms(packed: PackedTerms, fieldCount: number, field: number): Int32Array {
  let start = fieldCount;
  for (let i = 0; i < field; i++) {
    start += packed[i];
  }
  return packed.subarray(start, start + packed[field]);
}

export interface Bm25fParams {
  k1: number;
  /** Weight of a term occurrence in each field; fields not listed are not indexed. */
  weights: Record<string, number>;
  /** Length normalisation of each field (0: none, 1: full). */
  b: Record<string, number>;
}

/** A weighted query term: expansions (synonyms, corrected typos) weigh less than the words typed. */
export interface QueryTerm {
  term: number;
  weight: number;
}

interface Postings {
  docs: Int32Array;
  /** Length-normalised, field-weighted term frequency per document. */
  tf: Float32Array;
}

/**
 * An in-memory BM25F index (Robertson & Zaragoza's field-weighted BM25): occurrences are weighted by
 * field and normalised by field length before one saturation, so a word in a short name counts
 * more than the same word deep in a long description, and repeating it in several fields does not
 * add up without bound. Built whole from the documents; rebuilt when the catalogue changes.
 */
export class LexicalIndex {
  private readonly postings: (Postings | undefined)[] = [];
  readonly size: number;

  /** `fields` names the packed fields of the documents, in order. */
  constructor(
    documents: readonly PackedTerms[],
    fieldNames: readonly string[],
    private readonly params: Bm25fParams,
  ) {
    this.size = documents.length;
    const fields = fieldNames
      .map((name, index) => ({ name, index }))
      .filter((field) => (params.weights[field.name] ?? 0) > 0);
    const avg: Record<string, number> = {};
    for (const field of fields) {
      let total = 0;
      for (const doc of documents) {
        total += doc[field.index];
      }
      avg[field.name] = Math.max(total / Math.max(documents.length, 1), 1);
    }
    const docs: number[][] = [];
    const tfs: number[][] = [];
    const weighted = new Map<number, number>();
    documents.forEach((doc, id) => {
      weighted.clear();
      for (const field of fields) {
        const terms = fieldTerms(doc, fieldNames.length, field.index);
        if (terms.length === 0) {
          continue;
        }
        const b = params.b[field.name] ?? 0.75;
        const norm = params.weights[field.name] / (1 - b + (b * terms.length) / avg[field.name]);
        for (const term of terms) {
          weighted.set(term, (weighted.get(term) ?? 0) + norm);
        }
      }
      for (const [term, tf] of weighted) {
        (docs[term] ??= []).push(id);
        (tfs[term] ??= []).push(tf);
      }
    });
    docs.forEach((list, term) => {
      this.postings[term] = { docs: Int32Array.from(list), tf: Float32Array.from(tfs[term]) };
    });
  }

  /** Number of documents holding the term. */
  df(term: number): number {
    return this.postings[term]?.docs.length ?? 0;
  }

  has(term: number): boolean {
    return this.postings[term] !== undefined;
  }

  idf(term: number): number {
    const df = this.df(term);
    return Math.log(1 + (this.size - df + 0.5) / (df + 0.5));
  }

  /**
   * Adds each document's BM25F score to `scores` (indexed by document id), for documents whose
   * `allowed` entry is 1 (all when absent). Returns the ids that scored, each once.
   */
  score(query: readonly QueryTerm[], scores: Float32Array, allowed?: Uint8Array): number[] {
    const touched: number[] = [];
    const k1 = this.params.k1;
    for (const { term, weight } of query) {
      const list = this.postings[term];
      if (!list) {
        continue;
      }
      const idf = this.idf(term) * weight;
      const { docs, tf } = list;
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i];
        if (allowed && allowed[doc] === 0) {
          continue;
        }
        if (scores[doc] === 0) {
          touched.push(doc);
        }
        scores[doc] += (idf * (tf[i] * (k1 + 1))) / (tf[i] + k1);
      }
    }
    return touched;
  }
}
