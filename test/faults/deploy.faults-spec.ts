import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream, json } from '../e2e/execution/upstream.js';
import { startServe, stopServe } from '../helpers/cli.js';
import {
  client,
  configureAndLink,
  execute,
  newServiceData,
  prepareCatalogAndProject,
  type ServiceData,
} from './service.js';

const IN_FLIGHT = 20;
const UPSTREAM_DELAY_MS = 1_500;

async function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return { code: child.exitCode, signal: child.signalCode };
  }
  const [code, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  return { code, signal };
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      throw new Error('timed out waiting');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A deploy: SIGTERM reaches the real `patchbay serve` while executions are in flight. It stops
 * accepting, lets every accepted request finish, writes the execution log (the flush interval is
 * set far beyond the test so that only the shutdown writes it), closes the database and exits 0.
 */
describe('SIGTERM while requests are in flight', () => {
  let data: ServiceData;
  let upstream: Upstream;
  let apiKey: string;

  beforeAll(async () => {
    data = await newServiceData('deploy');
    upstream = await Upstream.start();
    apiKey = await prepareCatalogAndProject(data.env(), upstream.url);
  });

  afterAll(async () => {
    await upstream?.close();
    await data?.cleanup();
  });

  it('finishes every accepted request, writes the execution log, releases the data and exits 0', async () => {
    upstream.respond((request, response) => {
      setTimeout(() => json(response, 200, { n: request.query.get('n') }), UPSTREAM_DELAY_MS);
    });
    const server = await startServe(data.env({ EXECUTION_LOG_FLUSH_MS: '600000', SHUTDOWN_TIMEOUT_MS: '15000' }));
    const call = client(server.url, apiKey);
    try {
      await configureAndLink(call);
      upstream.received.length = 0;
      const inFlight = Array.from({ length: IN_FLIGHT }, (_, n) => execute(call, n));
      // Every request has reached the upstream: the service accepted all of them.
      await until(() => upstream.received.length === IN_FLIGHT, 10_000);
      const signalled = Date.now();
      server.child.kill('SIGTERM');

      // A new connection is no longer accepted (refused, or answered 503 while the listener closes).
      await new Promise((resolve) => setTimeout(resolve, 200));
      const late = await fetch(`${server.url}/v1/health`).then(
        (response) => response.status,
        () => 'refused',
      );
      expect([503, 'refused']).toContain(late);

      const answers = await Promise.all(inFlight);
      for (const [n, answer] of answers.entries()) {
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.body).toMatchObject({ success: true, data: { n: String(n) } });
      }
      const exit = await exitOf(server.child);
      expect(exit, server.output()).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalled).toBeLessThan(UPSTREAM_DELAY_MS + 10_000);
      expect(server.output()).toContain('Patchbay stopped');
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
      }
    }

    // The data directory is free (the embedded lock released) and the log holds every execution.
    const restarted = await startServe(data.env());
    try {
      const log = await client(restarted.url, apiKey)('GET', '/v1/executions?limit=100');
      expect(log.status).toBe(200);
      const rows = (log.body as { function_name: string; success: boolean }[]).filter((row) => row.success);
      expect(rows).toHaveLength(IN_FLIGHT);
    } finally {
      expect(await stopServe(restarted.child)).toBe(0);
    }
  });

  it('cuts requests still running at SHUTDOWN_TIMEOUT_MS and still exits 0', async () => {
    // An upstream that accepts and never answers: only the deadline ends the request.
    upstream.respond(() => undefined);
    const server = await startServe(data.env({ SHUTDOWN_TIMEOUT_MS: '1000' }));
    const call = client(server.url, apiKey);
    try {
      upstream.received.length = 0;
      const stuck = execute(call, 1).then(
        (answer) => answer.status,
        () => 'cut',
      );
      await until(() => upstream.received.length === 1, 10_000);
      const signalled = Date.now();
      server.child.kill('SIGTERM');
      const exit = await exitOf(server.child);
      expect(exit, server.output()).toEqual({ code: 0, signal: null });
      const took = Date.now() - signalled;
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(8_000);
      expect(await stuck).toBe('cut');
    } finally {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
      }
    }
  });
});
