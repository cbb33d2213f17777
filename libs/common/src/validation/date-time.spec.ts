import { describe, expect, it } from 'vitest';
import { isDateTime, parseDateTime } from './date-time.js';

describe('RFC 3339 date-times', () => {
  it.each([
    ['0050-06-01T12:00:00Z', '0050-06-01T12:00:00.000Z'],
    ['0001-01-01T00:30:00+01:00', '0000-12-31T23:30:00.000Z'],
    ['2025-06-03t10:00:00z', '2025-06-03T10:00:00.000Z'],
    ['2025-06-03 11:00:00+0100', '2025-06-03T10:00:00.000Z'],
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2025-06-03T10:00:00.1234Z', '2025-06-03T10:00:00.124Z'],
    ['2025-06-03T10:00:00.120000Z', '2025-06-03T10:00:00.120Z'],
    ['2025-06-03T10:00:00.29Z', '2025-06-03T10:00:00.290Z'],
  ])('%s is %s', (text, instant) => {
    expect(isDateTime(text)).toBe(true);
    expect(parseDateTime(text).toISOString()).toBe(instant);
  });

  it.each(['2025-06-03', '2025-06-03T10:00:00', '2025-02-30T00:00:00Z', '2025-06-03T09:59:60Z', 'now'])(
    'refuses %s',
    (text) => {
      expect(isDateTime(text)).toBe(false);
      expect(() => parseDateTime(text)).toThrow(RangeError);
    },
  );
});
