import { describe, expect, it } from 'vitest';
import { EmbeddingTable, topByScore, VectorIndex } from './vector-index.js';

/** A deterministic pseudo-random sequence (tests must not depend on Math.random). */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function unit(values: number[]): Float32Array {
  const norm = Math.hypot(...values) || 1;
  return Float32Array.from(values, (value) => value / norm);
}

describe('topByScore', () => {
  it('equals a full sort by score then id, ties included, for any size', () => {
    const random = sequence(7);
    for (const size of [0, 5, 300, 5000]) {
      const scores = new Float32Array(size);
      // Few distinct values: many ties at the threshold.
      for (let i = 0; i < size; i++) {
        scores[i] = Math.floor(random() * 20);
      }
      const ids = Array.from({ length: size }, (_, i) => size - 1 - i);
      const sorted = [...ids].sort((a, b) => scores[b] - scores[a] || a - b);
      for (const count of [1, 10, 100]) {
        expect(topByScore(ids, scores, count)).toEqual(sorted.slice(0, count));
      }
    }
  });

  it('equals a full sort for negative, zero and nearly equal scores', () => {
    const random = sequence(11);
    const size = 20_000;
    const scores = new Float32Array(size);
    for (let i = 0; i < size; i++) {
      // Some positive, many negative (differing in the last bits only), and -0 beside 0 (equal scores).
      const pick = random();
      const value = random() * (pick < 0.5 ? 1 : 1 + 1e-6 * random());
      scores[i] = pick < 0.05 ? value : pick < 0.1 ? 0 : pick < 0.15 ? -0 : -value;
    }
    const ids = Array.from({ length: size }, (_, i) => (i * 7919) % size);
    const sorted = [...ids].sort((a, b) => scores[b] - scores[a] || a - b);
    // 2000: the threshold among the zeros; 4000: among the negative scores.
    for (const count of [1, 250, 1000, 2000, 4000]) {
      expect(topByScore(ids, scores, count)).toEqual(sorted.slice(0, count));
    }
  });
});

describe('EmbeddingTable', () => {
  it('keeps cosine similarity within a small error', () => {
    const random = sequence(3);
    const table = new EmbeddingTable(20);
    for (let trial = 0; trial < 20; trial++) {
      const a = unit(Array.from({ length: 64 }, () => random() - 0.5));
      const b = unit(Array.from({ length: 64 }, () => random() - 0.5));
      const exact = a.reduce((sum, value, i) => sum + value * b[i], 0);
      table.set(trial, a);
      expect(Math.abs(table.similarity(trial, b) - exact)).toBeLessThan(0.02);
    }
  });

  it('keeps vectors of its dimensions only, and copies them between tables', () => {
    const table = new EmbeddingTable(3);
    table.set(0, unit([1, 2, 3, 4]));
    table.set(1, unit([1, 2]));
    const copy = new EmbeddingTable(2);
    copy.copy(1, table, 0);
    copy.copy(0, table, 1);
    expect([table.has(0), table.has(1), table.has(2)]).toEqual([true, false, false]);
    expect([copy.has(0), copy.has(1)]).toEqual([false, true]);
    expect(copy.similarity(1, unit([1, 2, 3, 4]))).toBeCloseTo(1, 2);
  });
});

describe('VectorIndex', () => {
  it('finds the most similar allowed documents among its candidates', () => {
    const random = sequence(11);
    const vectors = Array.from({ length: 2000 }, () => unit(Array.from({ length: 64 }, () => random() - 0.5)));
    const table = new EmbeddingTable(vectors.length);
    vectors.forEach((vector, id) => table.set(id, vector));
    const index = new VectorIndex(table);
    const allowed = new Uint8Array(vectors.length).fill(1);
    allowed[42] = 0;

    const near = unit([...vectors[7]].map((value) => value + (random() - 0.5) * 0.05));
    const candidates = index.candidates(near, allowed, 50);
    const hidden = index.candidates(vectors[42], allowed, 50);

    expect(candidates[0]).toBe(7);
    expect(hidden).not.toContain(42);
    expect(index.candidates(new Float32Array(32), allowed, 10)).toEqual([]);
  });
});
