import { describe, expect, it } from 'vitest';
import { WordVectors } from './embeddings/word-vectors.js';
import { expandQuery } from './query-expansion.js';
import { WordNeighbours } from './word-neighbours.js';

/** Word vectors of a few words (most frequent first), quantised as the compact file stores them. */
function vectors(entries: [string, number[]][]): WordVectors {
  const dimensions = entries[0][1].length;
  const codes = new Int8Array(entries.length * dimensions);
  const scales = new Float32Array(entries.length);
  entries.forEach(([, vector], rank) => {
    const max = Math.max(...vector.map(Math.abs));
    scales[rank] = max / 127;
    vector.forEach((value, i) => (codes[rank * dimensions + i] = Math.round(value / scales[rank])));
  });
  return new WordVectors(
    dimensions,
    entries.map(([word]) => word),
    codes,
    scales,
    new Float32Array(dimensions),
    [],
    'test',
  );
}

const wordVectors = vectors([
  ['email', [0.1, 1, 0.2, 0]],
  ['mail', [0.12, 0.95, 0.25, 0.01]],
  ['messages', [0.3, 0.8, 0.1, 0.1]],
  ['invoice', [0, 0.1, 1, 0.3]],
  ['bill', [0.05, 0.1, 0.9, 0.35]],
  ['drive', [1, 0, 0, 0.2]],
]);

describe('word-vector neighbours', () => {
  // Index terms are stems: "messages" is found through its stem "messag".
  const neighbours = new WordNeighbours(wordVectors, ['mail', 'messag', 'invoic', 'bill', 'drive', 'unknownterm']);

  it('gives the index terms nearest to a word, most similar first, without the word’s own stem', () => {
    const near = neighbours.of('email', 'email', 2, 0).map((n) => n.term);
    expect(near).toEqual(['mail', 'messag']);
    expect(neighbours.of('invoice', 'invoic', 3, 0).map((n) => n.term)[0]).toBe('bill');
    expect(neighbours.of('invoice', 'invoic', 5, 0).map((n) => n.term)).not.toContain('invoic');
  });

  it('keeps only neighbours at or above the similarity floor, and none for an unknown word', () => {
    const near = neighbours.of('email', 'email', 5, 0.9);
    expect(near.map((n) => n.term)).toEqual(['mail', 'messag']);
    expect(near.every((n) => n.similarity >= 0.9)).toBe(true);
    expect(neighbours.of('zzzz', 'zzzz', 5, 0)).toEqual([]);
    expect(neighbours.of('email', 'email', 0, 0)).toEqual([]);
  });

  it('adds the neighbours to a query below the typed words', () => {
    const ids = new Map(['email', 'mail', 'messag', 'invoic', 'bill', 'drive'].map((term, id) => [term, id]));
    const terms = expandQuery('email', { id: (term) => ids.get(term) }, undefined, undefined, undefined, {
      index: neighbours,
      options: { count: 1, weight: 0.5, minSimilarity: 0.5 },
    });
    expect(terms.find((t) => t.term === ids.get('email'))?.weight).toBe(1);
    const mail = terms.find((t) => t.term === ids.get('mail'));
    expect(mail?.weight).toBeGreaterThan(0.45);
    expect(mail?.weight).toBeLessThanOrEqual(0.5);
    expect(terms).toHaveLength(2);
  });
});
