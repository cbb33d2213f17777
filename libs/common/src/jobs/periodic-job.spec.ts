import { describe, expect, it } from 'vitest';
import { PeriodicJob } from './periodic-job.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PeriodicJob', () => {
  it('never runs twice at once: a run asked for meanwhile is skipped', async () => {
    let runs = 0;
    let release!: () => void;
    const job = new PeriodicJob(
      async () => {
        runs += 1;
        await new Promise<void>((resolve) => (release = resolve));
        return runs;
      },
      () => undefined,
    );
    const first = job.run();
    expect(await job.run()).toBeUndefined();
    release();
    expect(await first).toBe(1);
    const second = job.run();
    release();
    expect(await second).toBe(2);
  });

  it('runs on its timer, first after its delay, hands failures to onError, and stops', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const job = new PeriodicJob(
      () => {
        runs += 1;
        return Promise.reject(new Error(`run ${runs}`));
      },
      (error) => errors.push(error),
    );
    job.start(20, 5);
    for (let waited = 0; runs < 2 && waited < 5000; waited += 10) {
      await sleep(10);
    }
    job.stop();
    const seen = runs;
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(errors.map((error) => (error as Error).message)).toEqual(
      Array.from({ length: seen }, (_, index) => `run ${index + 1}`),
    );
    await sleep(50);
    expect(runs).toBe(seen);
  });
});
