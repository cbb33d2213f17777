import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** The fuzz tier (`npm run test:fuzz`): property-based requests against the running service. */
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['test/fuzz/**/*.fuzz.ts'], testTimeout: 600_000 },
});
