import { describe, expect, it } from 'vitest';
import { inputIssues, type InputLimits } from './input-limits.js';

const limits: InputLimits = { maxDepth: 3, maxArrayItems: 2, maxStringLength: 5, maxQueryValues: 2 };

describe('inputIssues', () => {
  it('accepts input within the limits', () => {
    expect(inputIssues('body', { a: [1, { b: 'abcde' }] }, limits)).toEqual([]);
    expect(inputIssues('query', { a: ['x', 'y'], b: 'z' }, limits)).toEqual([]);
    expect(inputIssues('path', undefined, limits)).toEqual([]);
  });

  it('names every string, key and item holding U+0000', () => {
    expect(inputIssues('body', { a: ['ok', '\u0000'], ['k\u0000']: 1 }, limits).map((issue) => issue.loc)).toEqual([
      ['body', 'a', 1],
      ['body', 'k\u0000'],
    ]);
    expect(inputIssues('query', { q: ['a', 'b\u0000'] }, limits)[0].loc).toEqual(['query', 'q', 1]);
    expect(inputIssues('path', { name: '\u0000' }, limits)[0]).toEqual({
      loc: ['path', 'name'],
      msg: 'String should not contain the NUL character (U+0000)',
      type: 'string_pattern_mismatch',
    });
  });

  it('reports depth, array, string and repeated-key limits', () => {
    expect(inputIssues('body', { a: { b: { c: 1 } } }, limits)).toEqual([]);
    expect(inputIssues('body', { a: { b: { c: { d: 1 } } } }, limits)).toEqual([
      { loc: ['body', 'a', 'b', 'c'], msg: 'JSON should be nested at most 3 levels deep', type: 'too_deep' },
    ]);
    expect(inputIssues('body', { a: [1, 2, 3] }, limits)[0].type).toBe('too_long');
    expect(inputIssues('body', { a: 'abcdef' }, limits)[0].type).toBe('string_too_long');
    expect(inputIssues('query', { a: ['1', '2', '3'] }, limits)[0]).toMatchObject({
      loc: ['query', 'a'],
      type: 'too_long',
    });
  });

  it('stops at 20 issues', () => {
    expect(
      inputIssues(
        'body',
        { a: ['\u0000', '\u0000'], ...Object.fromEntries([...Array(30).keys()].map((i) => [`k${i}`, '\u0000'])) },
        limits,
      ),
    ).toHaveLength(20);
  });
});
