import { Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { createEmbeddingProvider } from './embeddings/embedding-provider.factory.js';
import { EMBEDDING_PROVIDER } from './embeddings/embedding-provider.js';
import { SearchIndexService } from './search-index.service.js';
import { SearchIndexWriter } from './search-index-writer.js';
import { SearchRepository } from './search.repository.js';
import { WORD_VECTORS, wordVectorsProvider } from './word-vectors.provider.js';
import { WORDNET, wordnetProvider } from './wordnet.provider.js';
import type { WordVectors } from './embeddings/word-vectors.js';
import type { WordNet } from './wordnet.js';

/** The search index (documents, embeddings) and the ranking of intent searches. */
@Module({
  providers: [
    wordnetProvider,
    wordVectorsProvider,
    {
      provide: EMBEDDING_PROVIDER,
      inject: [AppConfig, WORDNET, WORD_VECTORS],
      useFactory: (config: AppConfig, wordnet: WordNet | null, vectors: WordVectors | null) =>
        createEmbeddingProvider(config, wordnet ?? undefined, vectors ?? undefined),
    },
    SearchRepository,
    SearchIndexWriter,
    SearchIndexService,
  ],
  exports: [SearchIndexService],
})
export class SearchModule {}
