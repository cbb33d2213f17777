import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { collectGarbage } from './collect-garbage.js';

describe('collectGarbage', () => {
  it('collects what nothing refers to any more, without exposing a global gc', async () => {
    let target: object | undefined = { payload: new Array(1000).fill('x') };
    const ref = new WeakRef(target);
    target = undefined;
    // A WeakRef keeps its target alive until the current job ends.
    await nextTurn();
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    // Again: the collector is obtained once.
    collectGarbage();
  });
});
