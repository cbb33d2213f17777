import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedEnv, startServe, stopServe } from '../../helpers/cli.js';

/** Waits until the start's summary has been written (it ends with an empty line after the catalogue). */
async function summaryOf(output: () => string): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (!/Catalogue: .*\n[\s\S]*\n\n/.test(output()) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return output();
}

/** The lines before the summary: what the logger wrote. */
function logLines(output: string): string[] {
  return output.slice(0, output.indexOf('Patchbay listening on')).split('\n').filter(Boolean);
}

// `npm start` is `patchbay serve --starter`: each start boots a process and the embedded database, and the
// first one imports and indexes the starter catalogue: generous bounds for a loaded 2-core machine.
const START_TIMEOUT_MS = 120_000;
describe('the start of patchbay serve (embedded database)', { timeout: 300_000 }, () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-start-'));
  });

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('ends a first start with a summary whose key works, and logs JSON lines when not on a terminal', async () => {
    const server = await startServe(embeddedEnv(dataDir, { LOG_LEVEL: 'info' }), ['--starter'], START_TIMEOUT_MS);
    try {
      const output = await summaryOf(server.output);
      expect(output).toContain(`Patchbay listening on ${server.url}`);
      expect(output).toContain(`  API docs:   ${server.url}/v1/docs`);
      expect(output).toContain(`  Database:   embedded, in ${dataDir}`);
      const catalogue = /Catalogue: {2}(\d+) apps, (\d+) functions \(the starter catalogue, loaded now\)/.exec(output);
      expect(Number(catalogue?.[1])).toBeGreaterThan(0);
      expect(Number(catalogue?.[2])).toBeGreaterThan(Number(catalogue?.[1]));
      const key = /API key: {4}(\S+)/.exec(output)?.[1];
      expect(key).toBeDefined();

      const apps = await fetch(`${server.url}/v1/apps/search?limit=100`, { headers: { 'x-api-key': key! } });
      expect(apps.status).toBe(200);
      expect(((await apps.json()) as unknown[]).length).toBeGreaterThan(0);

      const logs = logLines(output);
      expect(logs.length).toBeGreaterThan(0);
      const records = logs.map((line) => JSON.parse(line) as { level: number; msg: string; context?: string });
      // Nest's route mapping is debug-level: none of it at info.
      expect(records.filter((record) => record.context === 'RouterExplorer')).toEqual([]);
      expect(logs.join('\n')).not.toContain(key);
    } finally {
      expect(await stopServe(server.child)).toBe(0);
    }
  });

  it('shows no key on a later start, and writes readable lines with LOG_FORMAT=pretty', async () => {
    const server = await startServe(
      embeddedEnv(dataDir, { LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }),
      ['--starter'],
      START_TIMEOUT_MS,
    );
    try {
      const output = await summaryOf(server.output);
      expect(output).toMatch(/Catalogue: {2}\d+ apps, \d+ functions\n/);
      expect(output).not.toContain('API key:');
      const logs = logLines(output);
      expect(logs.length).toBeGreaterThan(0);
      for (const line of logs) {
        expect(() => JSON.parse(line) as unknown, line).toThrow();
      }
      expect(logs.some((line) => /^\[\d\d:\d\d:\d\d\] INFO/.test(line))).toBe(true);
    } finally {
      expect(await stopServe(server.child)).toBe(0);
    }
  });
});
