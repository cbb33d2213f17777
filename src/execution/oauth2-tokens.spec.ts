import { describe, expect, it } from 'vitest';
import { needsRefresh, REFRESH_MARGIN_SECONDS } from './oauth2-tokens.js';

describe('needsRefresh', () => {
  const now = 1_800_000_000;

  it('refreshes a token expiring within the margin, or already expired', () => {
    expect(needsRefresh({ expires_at: now + REFRESH_MARGIN_SECONDS - 1 }, now)).toBe(true);
    expect(needsRefresh({ expires_at: now - 10 }, now)).toBe(true);
  });

  it('keeps a token valid beyond the margin, and one whose provider gave no expiry', () => {
    expect(needsRefresh({ expires_at: now + REFRESH_MARGIN_SECONDS }, now)).toBe(false);
    expect(needsRefresh({}, now)).toBe(false);
  });
});
