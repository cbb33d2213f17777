import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/**
 * The faults tier (`npm run test:faults`): real `patchbay serve` processes stopped, killed and cut off
 * from their database or upstream. One file at a time: each starts processes and times their recovery.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/faults/**/*.faults-spec.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
