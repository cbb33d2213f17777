import { Logger, type Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { loadWordVectors, WORD_VECTORS_PACKAGE, type WordVectors } from './embeddings/word-vectors.js';

export const WORD_VECTORS = Symbol('WORD_VECTORS');

/**
 * The compact word vectors of the offline embedding, loaded once per process (built from the
 * optional package on the first start). Null for the other providers, and when the package is
 * missing: offline search then ranks exactly as without it, and the log says so.
 */
export const wordVectorsProvider: Provider = {
  provide: WORD_VECTORS,
  inject: [AppConfig],
  useFactory: async (config: AppConfig): Promise<WordVectors | null> => {
    if (config.EMBEDDINGS_PROVIDER !== 'offline') {
      return null;
    }
    const logger = new Logger('Search');
    const started = performance.now();
    const vectors = await loadWordVectors({ log: (message) => logger.log(message) });
    if (!vectors) {
      logger.log(
        `Word vectors not installed (optional package ${WORD_VECTORS_PACKAGE}): ` +
          'offline search uses the lexical ranking and hashed vectors only',
      );
      return null;
    }
    logger.log(`Word vectors: ${vectors.size} words (${vectors.id}) in ${(performance.now() - started).toFixed(0)} ms`);
    return vectors;
  },
};
