import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionScenario, pingFunction, type Scenario } from '../../factories/execution.factory.js';
import { runMcpPythonScript, setUpMcpPythonSdk } from '../../helpers/mcp-python-sdk.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';

/**
 * The official Python MCP SDK (`mcp` 2.3) against /v1/mcp: in its default mode (server/discover,
 * then protocol 2026-07-28) and in the 2025-11-25 initialize handshake (`mode="legacy"`).
 */
describe('/v1/mcp with the Python MCP SDK', () => {
  let app: TestApp;
  let upstream: Upstream;
  let apiKey: string;
  let scenario: Scenario;

  const run = (mode: string) =>
    runMcpPythonScript<{ protocol_version: string; tools: string[]; is_error: boolean; structured: unknown }>(
      'check_client.py',
      [`${app.url}/v1/mcp`, mode, scenario.fn.name],
      { PATCHBAY_API_KEY: apiKey, PATCHBAY_OWNER: scenario.owner },
    );

  beforeAll(async () => {
    setUpMcpPythonSdk();
    app = await TestApp.start();
    upstream = await Upstream.start();
    let projectId: string;
    ({ projectId, apiKey } = await app.ctx.newProject());
    scenario = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: pingFunction(`${upstream.url}/api`),
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
