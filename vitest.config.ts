import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

/** Builds the service and migrates a template database once; the medium and e2e tiers start from copies of it. */
export const DATABASE_SETUP = ['test/setup/global-setup.ts'];

/**
 * `npm test` runs both tiers: `unit` (specs next to the code, no database, so `npx vitest run src/x.spec.ts`
 * neither builds nor migrates) and `medium+e2e` (the database-backed tests, after the global set-up).
 */
export default defineConfig({
  plugins: [swc.vite({ module: { type: 'es6' } })],
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.spec.ts', 'libs/**/*.spec.ts'] } },
      {
        extends: true,
        test: {
          name: 'medium+e2e',
          include: ['test/**/*.spec.ts', 'test/**/*.e2e-spec.ts'],
          globalSetup: DATABASE_SETUP,
        },
      },
    ],
  },
});
