import { defineConfig } from 'vitest/config';
import base, { DATABASE_SETUP } from './vitest.config.js';

// The tier's own files, with the database set-up, instead of the default tiers (projects).
const { projects: _tiers, ...shared } = base.test ?? {};

/**
 * The faults tier (`npm run test:faults`): real `patchbay serve` processes stopped, killed and cut off
 * from their database or upstream. One file at a time: each starts processes and times their recovery.
 */
export default defineConfig({
  ...base,
  test: {
    ...shared,
    globalSetup: DATABASE_SETUP,
    include: ['test/faults/**/*.faults-spec.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
