import { describe, expect, it } from 'vitest';
import { fieldTerms, packIds, TermStore } from './lexical-index.js';

/** Each field's terms as a sorted list: what the store promises to give back. */
function multisets(packed: Int32Array, fields: number): number[][] {
  return Array.from({ length: fields }, (_, field) => [...fieldTerms(packed, fields, field)].sort((a, b) => a - b));
}

describe('TermStore', () => {
  it('gives back every field as the same multiset of terms, sorted', () => {
    const store = new TermStore(3);
    const documents = [
      packIds([[7, 3, 3, 1_000_000], [], [2 ** 31 - 1, 0]]),
      packIds([[], [], []]),
      packIds([[5], [5, 5, 5], [128, 127, 16_384]]),
    ];
    const handles = documents.map((doc) => store.add(doc));
    store.seal();
    documents.forEach((doc, id) => {
      const back = store.get(handles[id]);
      expect(multisets(back, 3)).toEqual(multisets(doc, 3));
      expect([...back.subarray(0, 3)]).toEqual([...doc.subarray(0, 3)]);
    });
    expect([...store.get(handles[0])]).toEqual([4, 0, 2, 3, 3, 7, 1_000_000, 0, 2 ** 31 - 1]);
  });

  it('keeps documents apart across its chunks, and after sealing takes new ones in a new chunk', () => {
    const store = new TermStore(2);
    const random = (seed: number) => () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    const next = random(42);
    const documents = Array.from({ length: 30_000 }, () =>
      packIds([
        Array.from({ length: next() % 40 }, () => next() % 200_000),
        Array.from({ length: next() % 200 }, () => next() % 5_000_000),
      ]),
    );
    const handles = new Uint32Array(documents.map((doc) => store.add(doc)));
    store.seal();
    const later = packIds([[1, 2], [3]]);
    const laterHandle = store.add(later);
    const source = store.source(handles);
    expect(source.count).toBe(documents.length);
    for (let id = 0; id < documents.length; id += 997) {
      expect(multisets(source.terms(id), 2)).toEqual(multisets(documents[id], 2));
    }
    expect(multisets(store.get(laterHandle), 2)).toEqual([[1, 2], [3]]);
  });
});
