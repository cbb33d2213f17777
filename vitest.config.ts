import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

/** Builds the service and migrates a template database once; the medium and e2e tiers start from copies of it. */
export const DATABASE_SETUP = ['test/setup/global-setup.ts'];

/**
 * The tiers (docs/development.md, "Test tiers"), one suffix each: `*.spec.ts` (unit, beside the code, no
 * database, so `npx vitest run src/x.spec.ts` neither builds nor migrates), `*.medium-spec.ts` (test/medium, a
 * real database) and `*.e2e-spec.ts` (test/e2e, the real service over HTTP); `npm test` runs the three. The fuzz
 * and faults tiers have their own configurations (vitest.fuzz.config.ts, vitest.faults.config.ts).
 */
export default defineConfig({
  plugins: [swc.vite({ module: { type: 'es6' } })],
  test: {
    pool: 'forks',
    // One worker process runs file after file without re-importing the service: importing it (Nest, TypeORM,
    // Fastify, the MCP SDK) again for every file took 45 % of the CPU time of ten e2e files (65 s against 35 s,
    // two rounds alternating). Test files hold no state between them: each starts its own app and database.
    isolate: false,
    // vitest's default is one worker fewer than the cores, so one on a 2-core machine; much of an e2e file's
    // time is spent waiting (timers, upstreams, the browser), and two workers overlap it.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['src/**/*.spec.ts', 'libs/**/*.spec.ts'] } },
      {
        extends: true,
        test: { name: 'medium', include: ['test/medium/**/*.medium-spec.ts'], globalSetup: DATABASE_SETUP },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.e2e-spec.ts'], globalSetup: DATABASE_SETUP } },
    ],
  },
});
