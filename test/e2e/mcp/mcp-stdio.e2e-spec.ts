import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';

const BIN = resolve('dist/src/main.js');

describe('patchbay mcp (stdio, forwarding to a running service)', () => {
  let app: TestApp;
  let upstream: Upstream;
  let apiKey: string;
  let scenario: Scenario;

  /** Spawns `patchbay mcp` with the SDK's stdio client; its standard error is collected. */
  const spawnBridge = async (args: string[]) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--url', app.url, ...args],
      stderr: 'pipe',
      env: { PATH: process.env.PATH ?? '' },
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, stderr: () => stderr };
  };

  beforeAll(async () => {
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
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
  });

  it('initialises, lists and executes through the running service; logs only to stderr', async () => {
    const { client, stderr } = await spawnBridge(['--api-key', apiKey, '--owner', scenario.owner]);
    expect(client.getServerVersion()?.name).toBe('patchbay');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('execute_function');
    const result = await client.callTool({
      name: 'execute_function',
      arguments: { function_name: scenario.fn.name, function_input: {} },
    });
    expect(result.structuredContent).toEqual({ success: true, data: { ok: true } });
    expect(upstream.last).toMatchObject({ method: 'GET', url: '/api/ping' });
    expect(stderr()).toContain('forwarding standard input to');
    await client.close();
  });

  it('direct mode and an owner-scoped token', async () => {
    const token = await app.post('/v1/mcp/tokens', { linked_account_owner_id: scenario.owner }, { apiKey });
    const { client } = await spawnBridge(['--token', token.body.token, '--mode', 'direct']);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([scenario.fn.name]);
    const result = await client.callTool({ name: scenario.fn.name, arguments: {} });
    expect(result.structuredContent).toEqual({ success: true, data: { ok: true } });
    await client.close();
  });

  it('answers a request refused by the service (wrong key) with a JSON-RPC error', async () => {
    await expect(spawnBridge(['--api-key', 'pb_wrong'])).rejects.toThrow(
      /Invalid credentials: the API key or MCP token is unknown, revoked or expired/,
    );
  });
});
