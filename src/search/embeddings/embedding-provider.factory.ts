import { Logger } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import type { WordNet } from '../wordnet.js';
import { EncoderEmbeddingProvider } from './encoder-embedding.provider.js';
import type { EmbeddingProvider } from './embedding-provider.js';
import { LocalEmbeddingProvider } from './local-embedding.provider.js';
import { OfflineEmbeddingProvider } from './offline-embedding.provider.js';
import { OpenAiEmbeddingProvider } from './openai-embedding.provider.js';
import { SemanticEmbeddingProvider } from './semantic-embedding.provider.js';
import { findSentenceEncoder, SENTENCE_ENCODER_PACKAGES, type SentenceEncoderSource } from './sentence-encoder.js';
import type { WordVectors } from './word-vectors.js';

/**
 * The provider the configuration names; the configuration was validated to hold what it needs. The
 * offline provider adds the word vectors' sentence vector when they are installed, and the sentence
 * encoder's vector when EMBEDDINGS_SENTENCE_ENCODER asks for it and its packages are installed.
 */
export function createEmbeddingProvider(
  config: AppConfig,
  wordnet: WordNet | undefined,
  wordVectors?: WordVectors,
  /** Where the sentence encoder's packages are; undefined: looked up; null: not installed. */
  encoderSource?: SentenceEncoderSource | null,
): EmbeddingProvider {
  switch (config.EMBEDDINGS_PROVIDER) {
    case 'offline': {
      const offline = wordVectors
        ? new SemanticEmbeddingProvider(wordVectors, wordnet)
        : new OfflineEmbeddingProvider(wordnet);
      if (config.EMBEDDINGS_SENTENCE_ENCODER === 'none') {
        return offline;
      }
      const logger = new Logger('Search');
      const source =
        encoderSource === undefined
          ? findSentenceEncoder()
          : (encoderSource ?? {
              missing: Object.values(SENTENCE_ENCODER_PACKAGES).map((name) => `optional package ${name}`),
            });
      if ('missing' in source) {
        logger.warn(`Sentence encoder not installed (${source.missing.join(', ')}): offline search goes on without it`);
        return offline;
      }
      const provider = new EncoderEmbeddingProvider(offline, source);
      logger.log(`Sentence encoder: ${provider.model}`);
      return provider;
    }
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
