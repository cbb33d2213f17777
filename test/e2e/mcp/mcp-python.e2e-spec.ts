import { execFile, execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const PYTHON = join(ROOT, '.venv-mcp-sdk/bin/python');
const SCRIPT = join(ROOT, 'test/sdk/mcp_python/check_client.py');

/**
 * The official Python MCP SDK (`mcp` 2.3) against /v1/mcp: in its default mode (server/discover,
 * then protocol 2026-07-28) and in the 2025-11-25 initialize handshake (`mode="legacy"`).
 */
describe('/v1/mcp with the Python MCP SDK', () => {
  let app: TestApp;
  let upstream: Upstream;
  let apiKey: string;
  let scenario: Scenario;

  const run = async (mode: string) => {
    const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, `${app.url}/v1/mcp`, mode, scenario.fn.name], {
      env: { PATH: process.env.PATH ?? '', PATCHBAY_API_KEY: apiKey, PATCHBAY_OWNER: scenario.owner },
    });
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
      protocol_version: string;
      tools: string[];
      is_error: boolean;
      structured: unknown;
    };
  };

  beforeAll(async () => {
    // The virtual environment is made once (here on first use).
    execFileSync('bash', [join(ROOT, 'scripts/setup-mcp-python-sdk.sh')], { cwd: ROOT, stdio: 'inherit' });
    app = await TestApp.start();
    upstream = await Upstream.start();
    let projectId: string;
    ({ projectId, apiKey } = await app.ctx.newProject());
    scenario = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: {
        protocol: 'rest',
        protocol_data: { method: 'GET', path: '/ping', server_url: `${upstream.url}/api` },
        parameters: { type: 'object', properties: {}, required: [], visible: [] },
      },
    });
  }, 300_000);

  afterAll(async () => {
    await upstream?.close();
    await app?.close();
  });

  it.each([
    ['auto', '2026-07-28'],
    ['legacy', '2025-11-25'],
  ])(
    'mode %s: speaks %s, lists the tools and executes',
    async (mode, version) => {
      upstream.reset();
      const seen = await run(mode);
      expect(seen.protocol_version).toBe(version);
      expect(seen.tools).toEqual(['search_functions', 'get_function_definition', 'execute_function']);
      expect(seen.is_error).toBe(false);
      expect(seen.structured).toEqual({ success: true, data: { ok: true } });
      expect(upstream.last).toMatchObject({ method: 'GET', url: '/api/ping' });
    },
    60_000,
  );
});
