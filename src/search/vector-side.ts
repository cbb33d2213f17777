import { type EmbeddingTable, topByScore, VectorIndex } from './vector-index.js';
import type { EngineOptions } from './engine-inputs.js';

/** Relevance per document id, and the ids with a positive value (each once). */
export interface Scores {
  values: Float32Array;
  ids: number[];
}

/** Candidates the approximate vector search and the lexical side each bring, above the exact limit. */
const APPROXIMATE_CANDIDATES = 250;

/**
 * The vector side of a search: the intent's cosine similarity with the allowed documents' embeddings,
 * exactly for up to `exactVectorLimit` of them, else over the candidates of an approximate search
 * (plus the best lexical matches).
 */
export class VectorSide {
  private indexes?: { apps: VectorIndex; functions: VectorIndex };

  constructor(
    private readonly apps: EmbeddingTable,
    private readonly functions: EmbeddingTable,
    /** Id of each function's app; -1 when the app is missing. */
    private readonly functionApp: Int32Array,
    private readonly options: Pick<EngineOptions, 'minSimilarity' | 'vectorCandidates' | 'exactVectorLimit'>,
  ) {}

  /**
   * An app is as similar to the intent as its own text or its most similar function, whichever is
   * closer: one vector cannot summarise an app of fifty functions, its functions can.
   */
  appSimilarities(
    vector: Float32Array | undefined,
    allowedApps: Uint8Array,
    lexical: Scores | undefined,
  ): Map<number, number> {
    const out = new Map<number, number>();
    if (!vector) {
      return out;
    }
    const allowedFunctions = new Uint8Array(this.functionApp.length);
    for (let id = 0; id < this.functionApp.length; id++) {
      const appId = this.functionApp[id];
      if (appId >= 0 && allowedApps[appId]) {
        allowedFunctions[id] = 1;
      }
    }
    const best = new Map<number, number>();
    const consider = (appId: number, value: number) => {
      if (value >= this.options.minSimilarity && value > (best.get(appId) ?? -Infinity)) {
        best.set(appId, value);
      }
    };
    for (const [id, value] of this.exactSimilarities(
      this.candidates('apps', vector, allowedApps, lexical),
      this.apps,
      vector,
    )) {
      consider(id, value);
    }
    const functionIds = this.candidates('functions', vector, allowedFunctions);
    for (const [id, value] of this.exactSimilarities(functionIds, this.functions, vector)) {
      consider(this.functionApp[id], value);
    }
    const ranked = [...best].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, this.options.vectorCandidates);
    for (const [id, value] of ranked) {
      out.set(id, value);
    }
    return out;
  }

  /**
   * The documents whose similarity is computed: all allowed ones when they are few enough; else the
   * candidates of the approximate vector search plus the best lexical matches.
   */
  private candidates(
    kind: 'apps' | 'functions',
    vector: Float32Array | undefined,
    allowed: Uint8Array,
    lexical?: Scores,
  ): number[] {
    if (!vector) {
      return [];
    }
    let count = 0;
    for (let id = 0; id < allowed.length; id++) {
      count += allowed[id];
    }
    if (count <= this.options.exactVectorLimit) {
      const all: number[] = [];
      for (let id = 0; id < allowed.length; id++) {
        if (allowed[id]) {
          all.push(id);
        }
      }
      return all;
    }
    const chosen = new Set(this.vectors()[kind].candidates(vector, allowed, APPROXIMATE_CANDIDATES));
    if (lexical) {
      for (const id of topByScore(lexical.ids, lexical.values, APPROXIMATE_CANDIDATES)) {
        chosen.add(id);
      }
    }
    return [...chosen];
  }

  private vectors(): { apps: VectorIndex; functions: VectorIndex } {
    this.indexes ??= { apps: new VectorIndex(this.apps), functions: new VectorIndex(this.functions) };
    return this.indexes;
  }

  /** Exact cosine similarity (vectors are unit length) of the candidates that have an embedding of the query's size. */
  private exactSimilarities(candidates: number[], vectors: EmbeddingTable, vector: Float32Array): [number, number][] {
    if (vectors.dimensions !== vector.length) {
      return [];
    }
    const ids = candidates.filter((id) => vectors.has(id));
    const values = vectors.similarities(ids, vector);
    return ids.map((id, k) => [id, values[k]]);
  }

  /** The `vectorCandidates` most similar allowed functions at or above the similarity floor, most similar first. */
  functionSimilarities(vector: Float32Array | undefined, allowed: Uint8Array, lexical?: Scores): Map<number, number> {
    if (!vector) {
      return new Map();
    }
    const candidates = this.candidates('functions', vector, allowed, lexical);
    const scored = this.exactSimilarities(candidates, this.functions, vector).filter(
      ([, value]) => value >= this.options.minSimilarity,
    );
    scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return new Map(scored.slice(0, this.options.vectorCandidates));
  }
}
