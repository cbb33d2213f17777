import { describe, expect, it } from 'vitest';
import { boolArray, int4Array, textArray, timestamptzArray, uuidArray } from './binary-arrays.js';

/** The header's five integers: dimensions, has-nulls, element OID, length, lower bound. */
const header = (buffer: Buffer) => [0, 4, 8, 12, 16].map((offset) => buffer.readInt32BE(offset));

describe('binary arrays (values round-trip through the databases in test/medium/execution-log-insert)', () => {
  it('write the header with the element type and a has-nulls flag, then each length and value', () => {
    const ints = int4Array([7, null, -1]);
    expect(header(ints)).toEqual([1, 1, 23, 3, 1]);
    expect(ints.subarray(20).toString('hex')).toBe('0000000400000007' + 'ffffffff' + '00000004ffffffff');
    expect(header(boolArray([true]))).toEqual([1, 0, 16, 1, 1]);
    expect(header(int4Array([]))).toEqual([1, 0, 23, 0, 1]);
  });

  it('encode each text as UTF-8 with its byte length', () => {
    const texts = textArray(['é', 'é', null]);
    expect(header(texts)).toEqual([1, 1, 25, 3, 1]);
    expect(texts.subarray(20).toString('hex')).toBe('00000002c3a9' + '00000002c3a9' + 'ffffffff');
  });

  it('count timestamps in microseconds from 2000-01-01, negative before it', () => {
    const times = timestamptzArray([Date.UTC(2000, 0, 1, 0, 0, 1) + 0.25, Date.UTC(1999, 11, 31, 23, 59, 59)]);
    expect(times.readBigInt64BE(24)).toBe(1_000_250n);
    expect(times.readBigInt64BE(36)).toBe(-1_000_000n);
  });

  it('refuse a UUID that is not in its canonical form, naming it', () => {
    expect(uuidArray(['019A0000-0000-7000-8000-00000000000f']).subarray(24).toString('hex')).toBe(
      '019a00000000700080000000000000' + '0f',
    );
    for (const bad of ['not-a-uuid', '019a0000-0000-7000-8000-00000000000g', '019a0000x0000-7000-8000-000000000001']) {
      expect(() => uuidArray([bad])).toThrow(`Not a UUID in its canonical form: "${bad}"`);
    }
  });

  it('refuse an integer outside 32 bits', () => {
    expect(() => int4Array([2 ** 31])).toThrow(RangeError);
  });
});
