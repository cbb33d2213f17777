import type { Bm25fParams, PackedTerms, TermSource } from './lexical-index.js';
import { DEFAULT_EXPANSION, type ExpansionWeights } from './query-expansion.js';
import type { EmbeddingTable } from './vector-index.js';
import type { WordNet } from './wordnet.js';
import type { FunctionEnablement } from '../catalog-rules/runnable.js';

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
  vectorWeight: 0.4,
  vectorCandidates: 100,
  exactVectorLimit: 3000,
  expansion: DEFAULT_EXPANSION,
};
