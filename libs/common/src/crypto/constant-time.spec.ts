import { describe, expect, it } from 'vitest';
import { constantTimeEqual } from './constant-time.js';

describe('constantTimeEqual', () => {
  it.each([
    { a: 'token-1', b: 'token-1', equal: true },
    { a: '', b: '', equal: true },
    { a: 'token-1', b: 'token-2', equal: false },
    { a: 'token', b: 'token-1', equal: false },
    { a: 'token-1', b: '', equal: false },
    // Same number of characters, different bytes: compared as UTF-8, not as UTF-16 code units.
    { a: 'é', b: 'e', equal: false },
  ])('$a and $b: $equal', ({ a, b, equal }) => {
    expect(constantTimeEqual(a, b)).toBe(equal);
  });
});
