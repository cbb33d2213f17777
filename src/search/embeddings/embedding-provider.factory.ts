import type { AppConfig } from '../../config/app-config.js';
import type { WordNet } from '../wordnet.js';
import type { EmbeddingProvider } from './embedding-provider.js';
import { LocalEmbeddingProvider } from './local-embedding.provider.js';
import { OfflineEmbeddingProvider } from './offline-embedding.provider.js';
import { OpenAiEmbeddingProvider } from './openai-embedding.provider.js';
import { SemanticEmbeddingProvider } from './semantic-embedding.provider.js';
import type { WordVectors } from './word-vectors.js';

/**
 * The provider the configuration names; the configuration was validated to hold what it needs. The
 * offline provider adds the word vectors' sentence vector when they are loaded.
 */
export function createEmbeddingProvider(
  config: AppConfig,
  wordnet: WordNet | undefined,
  wordVectors?: WordVectors,
): EmbeddingProvider {
  switch (config.EMBEDDINGS_PROVIDER) {
    case 'offline':
      return wordVectors ? new SemanticEmbeddingProvider(wordVectors, wordnet) : new OfflineEmbeddingProvider(wordnet);
    case 'openai':
      return new OpenAiEmbeddingProvider({
        url: config.EMBEDDINGS_URL as string,
        model: config.EMBEDDINGS_MODEL as string,
        apiKey: config.EMBEDDINGS_API_KEY,
        dimensions: config.EMBEDDINGS_DIMENSIONS,
        timeoutMs: config.EMBEDDINGS_TIMEOUT_MS,
        batchSize: config.EMBEDDINGS_BATCH_SIZE,
      });
    case 'local':
      return new LocalEmbeddingProvider({
        dir: config.EMBEDDINGS_MODEL_DIR as string,
        batchSize: config.EMBEDDINGS_BATCH_SIZE,
        queryPrefix: config.EMBEDDINGS_QUERY_PREFIX,
        documentPrefix: config.EMBEDDINGS_DOCUMENT_PREFIX,
      });
  }
}
