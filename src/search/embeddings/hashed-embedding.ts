import { stem, words } from '../text-analysis.js';
import type { WordNet } from '../wordnet.js';
import { normalize } from './embedding-provider.js';

export interface HashedEmbeddingOptions {
  dimensions: number;
  /** Weight of a word's character trigrams, shared among them (typos and word forms). */
  trigramWeight: number;
  /** Weight of each pair of adjacent words (word order, compounds). */
  bigramWeight: number;
  /** Weight of a WordNet synonym (times its sense weight). */
  synonymWeight: number;
}

export const HASHED_EMBEDDING_DEFAULTS: HashedEmbeddingOptions = {
  dimensions: 256,
  trigramWeight: 0.5,
  bigramWeight: 0.4,
  synonymWeight: 0.3,
};

/**
 * The offline embedding: a bag of features — word stems, adjacent word pairs, character trigrams and
 * WordNet synonyms — each hashed to one signed coordinate (the "hashing trick"), then L2-normalised.
 * Deterministic and dependency-free: the same text always gives the same vector, on any machine.
 */
export function hashedEmbedding(text: string, options: HashedEmbeddingOptions, wordnet?: WordNet): Float32Array {
  const vector = new Float32Array(options.dimensions);
  const add = (feature: string, weight: number) => {
    const digest = featureHash(feature);
    const index = digest % options.dimensions;
    vector[index] += (digest & 0x80000000 ? -1 : 1) * weight;
  };
  const list = words(text);
  for (let i = 0; i < list.length; i++) {
    const word = list[i];
    const stemmed = stem(word);
    const weight = 1;
    add(`w:${stemmed}`, weight);
    if (i + 1 < list.length) {
      add(`b:${stemmed}|${stem(list[i + 1])}`, options.bigramWeight * weight);
    }
    const padded = `#${word}#`;
    const grams = Math.max(padded.length - 2, 1);
    for (let j = 0; j + 3 <= padded.length; j++) {
      add(`c:${padded.slice(j, j + 3)}`, (options.trigramWeight * weight) / Math.sqrt(grams));
    }
    if (wordnet && options.synonymWeight > 0 && !/\d/.test(word)) {
      for (const related of wordnet.synonyms(word)) {
        add(`w:${stem(related.word)}`, options.synonymWeight * related.weight * weight);
      }
    }
  }
  return normalize(vector);
}

/**
 * A stable 32-bit hash of a feature (FNV-1a over its UTF-16 code units, then a murmur3 finaliser to
 * spread the bits): the same on every platform and run, so stored vectors stay comparable.
 */
function featureHash(feature: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < feature.length; i++) {
    hash ^= feature.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
