import { defineConfig } from 'vitest/config';
import base, { DATABASE_SETUP } from './vitest.config.js';

// The tier's own files, with the database set-up, instead of the default tiers (projects).
const { projects: _tiers, ...shared } = base.test ?? {};

/** The fuzz tier (`npm run test:fuzz`): property-based requests against the running service. */
export default defineConfig({
  ...base,
  test: { ...shared, globalSetup: DATABASE_SETUP, include: ['test/fuzz/**/*.fuzz-spec.ts'], testTimeout: 600_000 },
});
