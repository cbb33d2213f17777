import type { Provider } from '@nestjs/common';
import { WordNet } from './wordnet.js';

export const WORDNET = Symbol('WORDNET');

/** The WordNet database, opened once per process (undefined when the package is missing). */
export const wordnetProvider: Provider = {
  provide: WORDNET,
  useFactory: (): WordNet | null => WordNet.open() ?? null,
};
