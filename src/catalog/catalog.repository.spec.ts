import { describe, expect, it } from 'vitest';
import { chunksByBytes } from './catalog.repository.js';

describe('chunksByBytes', () => {
  const sizes = (chunks: number[][]) => chunks.map((chunk) => chunk.reduce((sum, size) => sum + size, 0));

  it('keeps every statement under the byte budget, in order, a larger row alone', () => {
    const rows = [400, 300, 500, 2_000, 100, 100, 900, 50];
    const chunks = [...chunksByBytes(rows, (size) => size, 1_000)];
    expect(chunks).toEqual([[400, 300], [500], [2_000], [100, 100], [900, 50]]);
    expect(chunks.flat()).toEqual(rows);
    expect(sizes(chunks).filter((size) => size > 1_000)).toEqual([2_000]);
  });

  it('takes at most 200 rows per statement however small they are', () => {
    const chunks = [
      ...chunksByBytes(
        Array.from({ length: 450 }, () => 1),
        (size) => size,
        1_000_000,
      ),
    ];
    expect(chunks.map((chunk) => chunk.length)).toEqual([200, 200, 50]);
  });

  it('gives nothing for no rows', () => {
    expect([...chunksByBytes([], () => 1)]).toEqual([]);
  });
});
