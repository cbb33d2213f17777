import { describe, expect, it } from 'vitest';
import { PieceTokenizer } from './piece-tokenizer.js';

const RESERVED: [string, number][] = ['\uFFFD', '<s>', '</s>', 'e1', 'e2', 'e3'].map((piece) => [piece, 0]);

/** A tokenizer over the reserved entries and `pieces` (ids from 6), and a way back from ids to pieces. */
function tokenizer(pieces: [string, number | null][]) {
  const vocabulary = [...RESERVED, ...pieces];
  const encoder = new PieceTokenizer(vocabulary);
  return (text: string) => encoder.encode(text).map((id) => vocabulary[id][0]);
}

describe('PieceTokenizer', () => {
  it('segments a text into the pieces of highest total log-probability, a space starting a word', () => {
    const encode = tokenizer([
      ['▁', -1],
      ['a', -1],
      ['b', -1.5],
      ['▁a', -1.5],
      ['▁ab', -2.5],
    ]);
    expect(encode('ab')).toEqual(['▁ab']);
    expect(encode('ab a')).toEqual(['▁ab', '▁a']);
    expect(encode('')).toEqual([]);
  });

  it('breaks ties as the model was trained with: the segmentation whose last piece starts later', () => {
    // ▁a (−2) and ▁ + a (−2) tie, then ▁ab (−3.5) and [▁ a] + b (−3.5).
    const encode = tokenizer([
      ['▁', -1],
      ['a', -1],
      ['b', -1.5],
      ['▁a', -2],
      ['▁ab', -3.5],
    ]);
    expect(encode('a')).toEqual(['▁', 'a']);
    expect(encode('ab')).toEqual(['▁', 'a', 'b']);
  });

  it('gives a run of characters no piece starts with one unknown id; a piece without a score counts 0', () => {
    const encode = tokenizer([
      ['▁', -1],
      ['a', -1],
      ['▁a', -1.5],
      ['b', null],
    ]);
    expect(encode('a?! ab')).toEqual(['▁a', '\uFFFD', '▁a', 'b']);
    // NFKC first: a full-width letter is the ASCII one.
    expect(encode('ａ')).toEqual(['▁a']);
  });
});
