import { describe, expect, it } from 'vitest';
import { Int8Rows, KERNEL_AVAILABLE } from './int8-dot.js';

/** A deterministic pseudo-random sequence (tests must not depend on Math.random). */
function sequence(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function filled(count: number, dimensions: number, random: () => number, kernel: boolean): Int8Rows {
  const rows = new Int8Rows(count, dimensions, kernel);
  for (let id = 0; id < count; id++) {
    const row = rows.row(id);
    for (let i = 0; i < dimensions; i++) {
      // Extremes included: -128 and 127 must sign-extend correctly.
      row[i] = i % 37 === 0 ? (id % 2 ? 127 : -128) : Math.floor(random() * 256) - 128;
    }
  }
  return rows;
}

/** The exact products in float64, from the rows as stored. */
function exact(rows: Int8Rows, ids: number[], vector: Float32Array): number[] {
  return ids.map((id) => rows.row(id).reduce((sum, value, i) => sum + value * vector[i], 0));
}

describe('Int8Rows', () => {
  it('runs the WebAssembly kernel on this Node.js (the module validates)', () => {
    expect(KERNEL_AVAILABLE).toBe(true);
  });

  for (const kernel of [true, false]) {
    it(`${kernel ? 'the WebAssembly kernel' : 'the JavaScript loop'} gives the exact products within the 16-bit query's error, for any ids, in their order`, () => {
      const random = sequence(kernel ? 5 : 6);
      // Dimensions below, at and above multiples of 16: the padding must add nothing.
      for (const dimensions of [1, 15, 16, 17, 100, 356]) {
        const rows = filled(300, dimensions, random, kernel);
        const vector = Float32Array.from({ length: dimensions }, () => random() * 2 - 1);
        const ids = [299, 0, 17, 17, 150, ...Array.from({ length: 40 }, () => Math.floor(random() * 300))];
        const into = new Float64Array(ids.length);
        rows.dotProducts(ids, vector, into);
        const expected = exact(rows, ids, vector);
        const bound = 128 * dimensions * (1 / 32_767);
        ids.forEach((_, k) => expect(Math.abs(into[k] - expected[k])).toBeLessThanOrEqual(bound));
      }
    });
  }

  it('a zero query gives zeros, and no ids gives nothing', () => {
    const rows = filled(10, 20, sequence(1), true);
    const into = new Float64Array(3).fill(9);
    rows.dotProducts([1, 2, 3], new Float32Array(20), into);
    expect([...into]).toEqual([0, 0, 0]);
    rows.dotProducts(
      [],
      Float32Array.from({ length: 20 }, () => 1),
      into,
    );
    expect([...into]).toEqual([0, 0, 0]);
  });

  it('the kernel and the loop agree to the last bit (both sum the same 16-bit products)', () => {
    const random = sequence(9);
    const simd = filled(500, 356, random, true);
    const loop = new Int8Rows(500, 356, false);
    for (let id = 0; id < 500; id++) {
      loop.row(id).set(simd.row(id));
    }
    const vector = Float32Array.from({ length: 356 }, () => random() - 0.5);
    const ids = Array.from({ length: 500 }, (_, id) => id);
    const a = new Float64Array(500);
    const b = new Float64Array(500);
    simd.dotProducts(ids, vector, a);
    loop.dotProducts(ids, vector, b);
    expect([...a]).toEqual([...b]);
  });
});
