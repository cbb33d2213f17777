import { describe, expect, it } from 'vitest';
import { cachedRow, loadingCache, loadRow } from './execution-cache.js';

interface Row {
  n: number;
}

/** A load the test resolves when it chooses, counting how often it was started. */
function deferredLoad() {
  const started: ((value: Row | null) => void)[] = [];
  const load = () => new Promise<Row | null>((resolve) => started.push(resolve));
  return { load, started };
}

describe('loading cache of the execution hot path', () => {
  it('shares one load between concurrent misses of a key, then serves the row without loading', async () => {
    const cache = loadingCache<Row>();
    const { load, started } = deferredLoad();
    const first = loadRow(cache, 'k', load);
    const second = loadRow(cache, 'k', load);
    expect(started).toHaveLength(1);
    expect(cachedRow(cache, 'k')).toBeUndefined();
    started[0]({ n: 1 });
    expect(await first).toEqual({ n: 1 });
    expect(await second).toBe(await first);
    expect(cachedRow(cache, 'k')).toEqual({ n: 1 });
    expect(await loadRow(cache, 'k', load)).toEqual({ n: 1 });
    expect(started).toHaveLength(1);
  });

  it('does not keep an absent row: the next call loads again', async () => {
    const cache = loadingCache<Row>();
    let loads = 0;
    const absent = () => {
      loads += 1;
      return Promise.resolve(null);
    };
    expect(await loadRow(cache, 'k', absent)).toBeNull();
    expect(cache.has('k')).toBe(false);
    expect(cachedRow(cache, 'k')).toBeUndefined();
    expect(await loadRow(cache, 'k', absent)).toBeNull();
    expect(loads).toBe(2);
  });

  it('returns a load that was running when the cache was cleared to its callers, without keeping it', async () => {
    const cache = loadingCache<Row>();
    const { load, started } = deferredLoad();
    const before = loadRow(cache, 'k', load);
    cache.clear();
    const after = loadRow(cache, 'k', load);
    expect(started).toHaveLength(2);
    started[0]({ n: 1 });
    expect(await before).toEqual({ n: 1 });
    expect(cachedRow(cache, 'k')).toBeUndefined();
    started[1]({ n: 2 });
    expect(await after).toEqual({ n: 2 });
    expect(cachedRow(cache, 'k')).toEqual({ n: 2 });
  });

  it('answers absent, not an error, for an absent row whose load was running when the cache was cleared', async () => {
    const cache = loadingCache<Row>();
    const { load, started } = deferredLoad();
    const before = loadRow(cache, 'k', load);
    cache.clear();
    started[0](null);
    expect(await before).toBeNull();
    expect(cache.has('k')).toBe(false);
  });

  it('passes a failed load to every caller waiting on it and keeps nothing', async () => {
    const cache = loadingCache<Row>();
    const failing = () => Promise.reject(new Error('database away'));
    const first = loadRow(cache, 'k', failing);
    const second = loadRow(cache, 'k', failing);
    await expect(first).rejects.toThrow('database away');
    await expect(second).rejects.toThrow('database away');
    expect(cache.has('k')).toBe(false);
  });
});
