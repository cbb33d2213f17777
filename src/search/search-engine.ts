import {
  type Bm25fParams,
  LexicalIndex,
  type PackedTerms,
  type QueryTerm,
  TermDictionary,
  type TermSource,
  termSource,
} from './lexical-index.js';
import { SEARCH_FIELDS } from './search-document.js';
import { DEFAULT_EXPANSION, type ExpansionWeights, expandQuery, SpellingIndex } from './query-expansion.js';
import { stems } from './text-analysis.js';
import { EmbeddingTable, topByScore, VectorIndex } from './vector-index.js';
import type { WordNet } from './wordnet.js';
import { enablesFunction, type FunctionEnablement } from '../app-configurations/runnable.js';

/**
 * A set of documents by id, one array per property: a 100k catalogue then costs a few large arrays
 * instead of hundreds of thousands of small objects.
 */
export interface EngineDocuments {
  /** Sorted (by UTF-16 code units), so that an id order is a name order. */
  names: readonly string[];
  descriptions: readonly string[];
  /** 1: public and active (for a function: the function itself; its app is checked separately). */
  visible: Uint8Array;
  /** Term ids (of the engine's dictionary) of the search fields, packed in SEARCH_FIELDS order. */
  terms: TermSource;
  vectors: EmbeddingTable;
}

export interface EngineApps extends EngineDocuments {
  categories: readonly (readonly string[])[];
}

export interface EngineFunctions extends EngineDocuments {
  /** Id of each function's app in the apps' set; -1 when the app is missing. */
  appIds: Int32Array;
}

/** One app as `SearchEngine.fromItems` takes it (small catalogues and tests). */
export interface EngineApp {
  name: string;
  description: string;
  categories: string[];
  visible: boolean;
  terms: PackedTerms;
  embedding?: Float32Array;
}

export interface EngineFunction {
  name: string;
  app_name: string;
  description: string;
  visible: boolean;
  terms: PackedTerms;
  embedding?: Float32Array;
}

export interface Hit {
  name: string;
  description: string;
}

/** What a caller may see: the filters of the request, applied before anything is ranked. */
export interface FunctionFilter {
  appNames?: string[];
  /** Per app, the functions a project may run (`all` or the listed names); absent: no restriction. */
  runnable?: Map<string, FunctionEnablement>;
}

export interface AppFilter {
  categories?: string[];
  /** Names of the apps the project configured; absent: no restriction. */
  configured?: Set<string>;
}

export interface RankRequest {
  intent: string;
  /** The intent's embedding; without it, the ranking is lexical. */
  vector?: Float32Array;
  offset: number;
  limit: number;
}

export interface EngineOptions {
  functionFields: Bm25fParams;
  appFields: Bm25fParams;
  /** Share of an app's score (for the intent) that each of its functions gets: the app as context. */
  appContext: number;
  /** Weight of the normalised lexical score; 0: the vector similarity alone ranks. */
  lexicalWeight: number;
  /** Weight of the normalised vector similarity next to the normalised lexical score. */
  vectorWeight: number;
  /** Documents taken from the vector side: the most similar ones. */
  vectorCandidates: number;
  /** Similarity under which the vector side ignores a document. */
  minSimilarity: number;
  /** Up to this many allowed documents, every similarity is computed; above, an approximate search picks candidates. */
  exactVectorLimit: number;
  /** Weights of the query's expansions (typos, glued words, synonyms, action words); undefined: the words as typed. */
  expansion?: ExpansionWeights;
  wordnet?: WordNet;
}

export const DEFAULT_ENGINE_OPTIONS: Omit<EngineOptions, 'minSimilarity' | 'wordnet'> = {
  functionFields: {
    k1: 1.2,
    weights: { name: 3, app: 2, tags: 1.5, description: 1, params: 0.3, context: 0.3, operation: 2 },
    b: { name: 0.5, app: 0, tags: 0.5, description: 0.75, params: 0.75, context: 0.75, operation: 0.5 },
  },
  appFields: {
    k1: 1.2,
    weights: { name: 3, tags: 1.5, description: 1, context: 0.1 },
    b: { name: 0.5, tags: 0.5, description: 0.75, context: 0.75 },
  },
  appContext: 0.4,
  lexicalWeight: 1,
  vectorWeight: 0.25,
  vectorCandidates: 100,
  exactVectorLimit: 3000,
  expansion: DEFAULT_EXPANSION,
};

/** Candidates the approximate vector search and the lexical side each bring, above the exact limit. */
const APPROXIMATE_CANDIDATES = 250;

/**
 * Lexical matches that are ranked by score; weaker matches follow with the unrelated documents, by
 * name. Bounds the work per search on a large catalogue (a common word matches thousands).
 */
const RANKED_MATCHES = 1000;

/** Apps scoring below this share of the best app's score give their functions no context score. */
const APP_CONTEXT_CUTOFF = 0.1;

/** Relevance per document id, and the ids with a positive value (each once). */
interface Scores {
  values: Float32Array;
  ids: number[];
}

/** The `RANKED_MATCHES` best scores; the others are dropped (set to 0). */
function strongest(scores: Scores): Scores {
  if (scores.ids.length <= RANKED_MATCHES) {
    return scores;
  }
  const ids = topByScore(scores.ids, scores.values, RANKED_MATCHES);
  const values = new Float32Array(scores.values.length);
  for (const id of ids) {
    values[id] = scores.values[id];
  }
  return { values, ids };
}

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function columns<T extends { name: string; description: string; visible: boolean; terms: PackedTerms }>(
  items: readonly (T & { embedding?: Float32Array })[],
): EngineDocuments {
  const vectors = new EmbeddingTable(items.length);
  items.forEach((item, id) => item.embedding && vectors.set(id, item.embedding));
  return {
    names: items.map((item) => item.name),
    descriptions: items.map((item) => item.description),
    visible: Uint8Array.from(items, (item) => (item.visible ? 1 : 0)),
    terms: termSource(items.map((item) => item.terms)),
    vectors,
  };
}

/**
 * The search index of one catalogue state, in memory: BM25F indexes of apps and functions, the
 * embeddings of the current model, and what filters need (visibility, apps, categories). Immutable:
 * a catalogue change builds a new engine. Ranking is synchronous and allocation-light, so that a
 * search over 100k functions stays within a few milliseconds.
 */
export class SearchEngine {
  private readonly appIds = new Map<string, number>();
  /** Function ids of app a: entries appFunctionOffsets[a] to appFunctionOffsets[a + 1] of `appFunctions`. */
  private readonly appFunctionOffsets: Int32Array;
  private readonly appFunctions: Int32Array;
  private readonly functionApp: Int32Array;
  /** 1 for a function that is public and active in an app that is public and active. */
  private readonly visibleFunctions: Uint8Array;
  private readonly appIndex: LexicalIndex;
  private readonly functionIndex: LexicalIndex;
  private spelling?: SpellingIndex;
  private vectorIndexes?: { apps: VectorIndex; functions: VectorIndex };

  constructor(
    private readonly apps: EngineApps,
    private readonly functions: EngineFunctions,
    private readonly dictionary: TermDictionary,
    private readonly options: EngineOptions,
  ) {
    apps.names.forEach((name, id) => this.appIds.set(name, id));
    const appCount = apps.names.length;
    const functionCount = functions.names.length;
    this.functionApp = functions.appIds;
    this.visibleFunctions = new Uint8Array(functionCount);
    this.appFunctionOffsets = new Int32Array(appCount + 1);
    for (let id = 0; id < functionCount; id++) {
      const appId = this.functionApp[id];
      if (appId >= 0) {
        this.appFunctionOffsets[appId + 1]++;
        this.visibleFunctions[id] = functions.visible[id] && apps.visible[appId] ? 1 : 0;
      }
    }
    for (let appId = 0; appId < appCount; appId++) {
      this.appFunctionOffsets[appId + 1] += this.appFunctionOffsets[appId];
    }
    this.appFunctions = new Int32Array(this.appFunctionOffsets[appCount]);
    const next = this.appFunctionOffsets.slice(0, appCount);
    for (let id = 0; id < functionCount; id++) {
      const appId = this.functionApp[id];
      if (appId >= 0) {
        this.appFunctions[next[appId]++] = id;
      }
    }
    this.appIndex = new LexicalIndex(apps.terms, SEARCH_FIELDS, options.appFields);
    this.functionIndex = new LexicalIndex(functions.terms, SEARCH_FIELDS, options.functionFields);
  }

  /** An engine over items given one object each (sorted here). */
  static fromItems(
    apps: readonly EngineApp[],
    functions: readonly EngineFunction[],
    dictionary: TermDictionary,
    options: EngineOptions,
  ): SearchEngine {
    const sortedApps = [...apps].sort(byName);
    const sortedFunctions = [...functions].sort(byName);
    const appIds = new Map(sortedApps.map((app, id) => [app.name, id]));
    return new SearchEngine(
      { ...columns(sortedApps), categories: sortedApps.map((app) => app.categories) },
      {
        ...columns(sortedFunctions),
        appIds: Int32Array.from(sortedFunctions, (fn) => appIds.get(fn.app_name) ?? -1),
      },
      dictionary,
      options,
    );
  }

  /** Function ids of an app. */
  private functionsOfApp(appId: number): Int32Array {
    return this.appFunctions.subarray(this.appFunctionOffsets[appId], this.appFunctionOffsets[appId + 1]);
  }

  get functionCount(): number {
    return this.functions.names.length;
  }

  get appCount(): number {
    return this.apps.names.length;
  }

  /** True when the intent has at least one word that can be searched for (not only stop words or symbols). */
  static hasTerms(intent: string): boolean {
    return stems(intent).length > 0;
  }

  rankFunctions(request: RankRequest, filter: FunctionFilter): Hit[] {
    const allowed = this.allowedFunctions(filter);
    return this.page(this.functions, allowed, this.scoreFunctions(request, allowed), request);
  }

  rankApps(request: RankRequest, filter: AppFilter): Hit[] {
    const allowed = this.allowedApps(filter);
    return this.page(this.apps, allowed, this.scoreApps(request, allowed), request);
  }

  private allowedFunctions(filter: FunctionFilter): Uint8Array {
    if (!filter.appNames?.length && !filter.runnable) {
      return this.visibleFunctions.slice();
    }
    const allowed = new Uint8Array(this.functionCount);
    // Only the functions of the named (or configured) apps need a look.
    let appNames = filter.appNames?.length ? [...new Set(filter.appNames)] : [...(filter.runnable?.keys() ?? [])];
    if (filter.runnable && filter.appNames?.length) {
      appNames = appNames.filter((name) => filter.runnable?.has(name));
    }
    for (const appName of appNames) {
      const appId = this.appIds.get(appName);
      if (appId === undefined) {
        continue;
      }
      const rule = filter.runnable?.get(appName);
      for (const id of this.functionsOfApp(appId)) {
        if (this.visibleFunctions[id] && (!rule || enablesFunction(rule, this.functions.names[id]))) {
          allowed[id] = 1;
        }
      }
    }
    return allowed;
  }

  private allowedApps(filter: AppFilter): Uint8Array {
    const allowed = new Uint8Array(this.appCount);
    const categories = filter.categories?.length ? new Set(filter.categories) : undefined;
    for (let id = 0; id < this.appCount; id++) {
      if (!this.apps.visible[id] || (filter.configured && !filter.configured.has(this.apps.names[id]))) {
        continue;
      }
      if (categories && !this.apps.categories[id].some((category) => categories.has(category))) {
        continue;
      }
      allowed[id] = 1;
    }
    return allowed;
  }

  private query(intent: string): QueryTerm[] {
    const indexed = (id: number | undefined) =>
      id !== undefined && (this.functionIndex.has(id) || this.appIndex.has(id)) ? id : undefined;
    const { expansion } = this.options;
    if (!expansion) {
      return stems(intent)
        .map((term) => indexed(this.dictionary.id(term)))
        .filter((term): term is number => term !== undefined)
        .map((term) => ({ term, weight: 1 }));
    }
    if (!this.spelling) {
      const terms: string[] = [];
      for (let id = 0; id < this.dictionary.size; id++) {
        if (indexed(id) !== undefined) {
          terms.push(this.dictionary.term(id));
        }
      }
      this.spelling = new SpellingIndex(terms);
    }
    const vocabulary = { id: (term: string) => indexed(this.dictionary.id(term)) };
    return expandQuery(intent, vocabulary, this.spelling, this.options.wordnet, expansion);
  }

  /** Relevance per function id (0: unrelated), for the allowed ones. */
  private scoreFunctions(request: RankRequest, allowed: Uint8Array): Scores {
    const n = this.functionCount;
    let lexical: Scores | undefined;
    if (this.options.lexicalWeight > 0) {
      const terms = this.query(request.intent);
      const values = new Float32Array(n);
      const ids = this.functionIndex.score(terms, values, allowed);
      const appScores = new Float32Array(this.appCount);
      const matchedApps = this.appIndex.score(terms, appScores);
      let bestApp = 0;
      for (const appId of matchedApps) {
        bestApp = Math.max(bestApp, appScores[appId]);
      }
      // The app as context: every allowed function of a matching app gets a share of its score.
      for (const appId of matchedApps) {
        if (appScores[appId] < APP_CONTEXT_CUTOFF * bestApp) {
          continue;
        }
        const share = this.options.appContext * appScores[appId];
        for (const id of this.functionsOfApp(appId)) {
          if (allowed[id]) {
            if (values[id] === 0) {
              ids.push(id);
            }
            values[id] += share;
          }
        }
      }
      lexical = strongest({ values, ids });
    }
    const candidates = this.vectorCandidates('functions', request.vector, allowed, lexical);
    return this.fuse(lexical, this.similarities(candidates, this.functions, request.vector), n);
  }

  private scoreApps(request: RankRequest, allowed: Uint8Array): Scores {
    const n = this.appCount;
    let lexical: Scores | undefined;
    if (this.options.lexicalWeight > 0) {
      const values = new Float32Array(n);
      const ids = this.appIndex.score(this.query(request.intent), values, allowed);
      lexical = strongest({ values, ids });
    }
    return this.fuse(lexical, this.appSimilarities(request.vector, allowed, lexical), n);
  }

  /**
   * An app is as similar to the intent as its own text or its most similar function, whichever is
   * closer: one vector cannot summarise an app of fifty functions, its functions can.
   */
  private appSimilarities(
    vector: Float32Array | undefined,
    allowedApps: Uint8Array,
    lexical: Scores | undefined,
  ): Map<number, number> {
    const out = new Map<number, number>();
    if (!vector) {
      return out;
    }
    const allowedFunctions = new Uint8Array(this.functionCount);
    for (let id = 0; id < this.functionCount; id++) {
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
      this.vectorCandidates('apps', vector, allowedApps, lexical),
      this.apps.vectors,
      vector,
    )) {
      consider(id, value);
    }
    const functionIds = this.vectorCandidates('functions', vector, allowedFunctions);
    for (const [id, value] of this.exactSimilarities(functionIds, this.functions.vectors, vector)) {
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
  private vectorCandidates(
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
    this.vectorIndexes ??= {
      apps: new VectorIndex(this.apps.vectors),
      functions: new VectorIndex(this.functions.vectors),
    };
    return this.vectorIndexes;
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

  /** The `vectorCandidates` most similar candidates at or above the similarity floor. */
  private similarities(
    candidates: number[],
    docs: EngineDocuments,
    vector: Float32Array | undefined,
  ): Map<number, number> {
    if (!vector) {
      return new Map();
    }
    const scored = this.exactSimilarities(candidates, docs.vectors, vector).filter(
      ([, value]) => value >= this.options.minSimilarity,
    );
    scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return new Map(scored.slice(0, this.options.vectorCandidates));
  }

  /**
   * Score fusion: the lexical score divided by the best one, plus the weighted similarity above the
   * floor divided by the best one. Both sides are scaled to [0, 1] so that neither the number of
   * query words nor the embedding model's similarity range decides the balance.
   */
  private fuse(lexical: Scores | undefined, similarity: Map<number, number>, n: number): Scores {
    const values = new Float32Array(n);
    const ids: number[] = [];
    if (lexical) {
      let max = 0;
      for (const id of lexical.ids) {
        max = Math.max(max, lexical.values[id]);
      }
      for (const id of lexical.ids) {
        values[id] = (this.options.lexicalWeight * lexical.values[id]) / max;
        ids.push(id);
      }
    }
    const floor = this.options.minSimilarity;
    let maxSimilarity = floor;
    for (const value of similarity.values()) {
      maxSimilarity = Math.max(maxSimilarity, value);
    }
    const weight = lexical ? this.options.vectorWeight : 1;
    if (maxSimilarity > floor) {
      for (const [id, value] of similarity) {
        const add = (weight * (value - floor)) / (maxSimilarity - floor);
        if (add > 0) {
          if (values[id] === 0) {
            ids.push(id);
          }
          values[id] += add;
        }
      }
    }
    return { values, ids };
  }

  /**
   * One page of the allowed documents: those with a positive score by score, ties by name; then the
   * others by name. The order is total and independent of the page, so pages never overlap.
   */
  private page(docs: EngineDocuments, allowed: Uint8Array, scores: Scores, request: RankRequest): Hit[] {
    const end = request.offset + request.limit;
    // Documents are stored by name, so an id order is a name order.
    const positive = scores.ids.filter((id) => allowed[id] && scores.values[id] > 0);
    const ids = topByScore(positive, scores.values, end).slice(request.offset);
    if (ids.length < request.limit) {
      let skip = Math.max(request.offset - positive.length, 0);
      for (let id = 0; id < docs.names.length && ids.length < request.limit; id++) {
        if (allowed[id] && !(scores.values[id] > 0)) {
          if (skip > 0) {
            skip--;
          } else {
            ids.push(id);
          }
        }
      }
    }
    return ids.map((id) => ({ name: docs.names[id], description: docs.descriptions[id] }));
  }
}
