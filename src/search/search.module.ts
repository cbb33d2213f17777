import { Module } from '@nestjs/common';
import { EMBEDDING_PROVIDER } from './embeddings/embedding-provider.js';
import { OfflineEmbeddingProvider } from './embeddings/offline-embedding.provider.js';
import { SemanticEmbeddingProvider } from './embeddings/semantic-embedding.provider.js';
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
      // The word vectors' sentence vector joins the hashed features when the shipped file is there.
      provide: EMBEDDING_PROVIDER,
      inject: [WORDNET, WORD_VECTORS],
      useFactory: (wordnet: WordNet | null, vectors: WordVectors | null) =>
        vectors
          ? new SemanticEmbeddingProvider(vectors, wordnet ?? undefined)
          : new OfflineEmbeddingProvider(wordnet ?? undefined),
    },
    SearchRepository,
    SearchIndexWriter,
    SearchIndexService,
  ],
  exports: [SearchIndexService],
})
export class SearchModule {}
