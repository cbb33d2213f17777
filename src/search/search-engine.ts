import { LexicalIndex, type PackedTerms, type QueryTerm, TermDictionary, termSource } from './lexical-index.js';
import { SEARCH_FIELDS } from './search-document.js';
import { expandQuery, SpellingIndex } from './query-expansion.js';
import { stems } from './text-analysis.js';
import { EmbeddingTable, topByScore } from './vector-index.js';
import { type Scores, VectorSide } from './vector-side.js';
import { enablesFunction } from '../catalog-rules/runnable.js';
import type {
  AppFilter,
  EngineApp,
  EngineApps,
  EngineDocuments,
  EngineFunction,
  EngineFunctions,
  EngineOptions,
  FunctionFilter,
  Hit,
  RankRequest,
} from './engine-inputs.js';

export {
  DEFAULT_ENGINE_OPTIONS,
  type AppFilter,
  type EngineApp,
  type EngineApps,
  type EngineDocuments,
  type EngineFunction,
  type EngineFunctions,
  type EngineOptions,
  type FunctionFilter,
  type Hit,
  type RankRequest,
} from './engine-inputs.js';

/**
 * Lexical matches that are ranked by score; weaker matches follow with the unrelated documents, by
 * name. Bounds the work per search on a large catalogue (a common word matches thousands).
 */
const RANKED_MATCHES = 1000;

/** Apps scoring below this share of the best app's score give their functions no context score. */
const APP_CONTEXT_CUTOFF = 0.1;

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
  private readonly vectorSide: VectorSide;

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
    this.vectorSide = new VectorSide(apps.vectors, functions.vectors, this.functionApp, options);
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
    return this.fuse(lexical, this.vectorSide.functionSimilarities(request.vector, allowed, lexical), n);
  }

  private scoreApps(request: RankRequest, allowed: Uint8Array): Scores {
    const n = this.appCount;
    let lexical: Scores | undefined;
    if (this.options.lexicalWeight > 0) {
      const values = new Float32Array(n);
      const ids = this.appIndex.score(this.query(request.intent), values, allowed);
      lexical = strongest({ values, ids });
    }
    return this.fuse(lexical, this.vectorSide.appSimilarities(request.vector, allowed, lexical), n);
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
