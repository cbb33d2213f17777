import { describe, expect, it } from 'vitest';
import { enablesFunction, runnableSql } from './runnable.js';

describe('the runnable rule', () => {
  it('enables every function when all_functions_enabled, else only the listed ones', () => {
    expect(enablesFunction({ all_functions_enabled: true, enabled_functions: [] }, 'A__X')).toBe(true);
    expect(enablesFunction({ all_functions_enabled: false, enabled_functions: ['A__X'] }, 'A__X')).toBe(true);
    expect(enablesFunction({ all_functions_enabled: false, enabled_functions: ['A__Y'] }, 'A__X')).toBe(false);
    expect(enablesFunction({ all_functions_enabled: false, enabled_functions: [] }, 'A__X')).toBe(false);
  });

  it('is the same rule as SQL: the configuration enabled, and the function enabled by it', () => {
    expect(runnableSql('c', 'f.name')).toBe(
      'c.enabled AND (c.all_functions_enabled OR f.name = ANY(c.enabled_functions))',
    );
  });
});
