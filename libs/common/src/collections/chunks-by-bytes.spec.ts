import { describe, expect, it } from 'vitest';
import { chunksByBytes } from './chunks-by-bytes.js';

describe('chunksByBytes', () => {
  const sizes = (chunks: number[][]) => chunks.map((chunk) => chunk.reduce((sum, size) => sum + size, 0));

  it('keeps every chunk under the byte budget, in order, a larger row alone', () => {
    const rows = [400, 300, 500, 2_000, 100, 100, 900, 50];
    const chunks = [...chunksByBytes(rows, (size) => size, 1_000, 200)];
    expect(chunks).toEqual([[400, 300], [500], [2_000], [100, 100], [900, 50]]);
    expect(chunks.flat()).toEqual(rows);
    expect(sizes(chunks).filter((size) => size > 1_000)).toEqual([2_000]);
  });

  it('takes at most maxRows rows per chunk however small they are', () => {
    const chunks = [
      ...chunksByBytes(
        Array.from({ length: 450 }, () => 1),
        (size) => size,
        1_000_000,
        200,
      ),
    ];
    expect(chunks.map((chunk) => chunk.length)).toEqual([200, 200, 50]);
  });

  it('gives nothing for no rows', () => {
    expect([...chunksByBytes([], () => 1, 1_000, 200)]).toEqual([]);
  });
});
