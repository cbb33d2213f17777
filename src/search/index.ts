/**
 * What search offers outside its module: the service the features call, and the pieces that build and
 * rank an index in process (the evaluation harness and the benchmarks use these, nothing deeper).
 */
export { SearchModule } from './search.module.js';
export { SearchIndexService, type AppSearchRequest, type FunctionSearchRequest } from './search-index.service.js';
export {
  analyseFields,
  appDocument,
  functionDocument,
  SEARCH_FIELDS,
  type AppText,
  type FunctionText,
  type SearchField,
} from './search-document.js';
export { TermDictionary } from './lexical-index.js';
export {
  DEFAULT_ENGINE_OPTIONS,
  SearchEngine,
  type EngineOptions,
  type Hit,
  type RankRequest,
} from './search-engine.js';
export { DEFAULT_EXPANSION, type ExpansionWeights } from './query-expansion.js';
export type { EmbeddingProvider } from './embeddings/embedding-provider.js';
export { OfflineEmbeddingProvider } from './embeddings/offline-embedding.provider.js';
export {
  SEMANTIC_EMBEDDING_DEFAULTS,
  SemanticEmbeddingProvider,
  type SemanticEmbeddingOptions,
} from './embeddings/semantic-embedding.provider.js';
export { loadWordVectors, type WordVectors } from './embeddings/word-vectors.js';
export { WordNet } from './wordnet.js';
