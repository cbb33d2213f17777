import { Logger, type Provider } from '@nestjs/common';
import { loadWordVectors, WORD_VECTORS_FILE, type WordVectors } from './embeddings/word-vectors.js';

export const WORD_VECTORS = Symbol('WORD_VECTORS');

/**
 * The compact word vectors of the offline embedding (the repository's assets/word-vectors.bin),
 * loaded once per process. Null when the file is missing: search then ranks with the lexical side
 * and hashed vectors only, and the log says so.
 */
export const wordVectorsProvider: Provider = {
  provide: WORD_VECTORS,
  useFactory: (): WordVectors | null => {
    const logger = new Logger('Search');
    const started = performance.now();
    const vectors = loadWordVectors();
    if (!vectors) {
      logger.log(
        `Word vectors not found (${WORD_VECTORS_FILE}): search uses the lexical ranking and hashed vectors only`,
      );
      return null;
    }
    logger.log(`Word vectors: ${vectors.size} words (${vectors.id}) in ${(performance.now() - started).toFixed(0)} ms`);
    return vectors;
  },
};
