import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executionScenario, pingFunction, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';
import { type McpRevision, type McpTestClient, REVISIONS } from './mcp-client.js';

const BIN = resolve('dist/src/main.js');

describe.each(REVISIONS)(
  'patchbay mcp (stdio, forwarding to a running service), protocol %s',
  (revision: McpRevision) => {
    let app: TestApp;
    let upstream: Upstream;
    let apiKey: string;
    let scenario: Scenario;

    /**
     * Spawns `patchbay mcp` with the stdio client of the revision's SDK (v1 for 2025-11-25, v2 pinned
     * to 2026-07-28); its standard error is collected.
     */
    const spawnBridge = async (args: string[], log: string[] = []) => {
      const parameters = {
        command: process.execPath,
        args: [BIN, 'mcp', '--url', app.url, ...args],
        stderr: 'pipe' as const,
        env: { PATH: process.env.PATH ?? '' },
      };
      const collect = (chunk: Buffer) => log.push(chunk.toString());
      const stderr = () => log.join('');
      if (revision === '2026-07-28') {
        const transport = new ModernStdioTransport(parameters);
        transport.stderr?.on('data', collect);
        const client = new ModernClient(
          { name: 'stdio-test', version: '2.0.0' },
          { versionNegotiation: { mode: { pin: revision } } },
        );
        await client.connect(transport);
        expect(client.getNegotiatedProtocolVersion()).toBe(revision);
        return { client: client as unknown as McpTestClient, stderr };
      }
      const transport = new StdioClientTransport(parameters);
      transport.stderr?.on('data', collect);
      const client = new Client({ name: 'stdio-test', version: '1.0.0' });
      await client.connect(transport);
      return { client: client as McpTestClient, stderr };
    };

    beforeAll(async () => {
      app = await TestApp.start();
      upstream = await Upstream.start();
      let projectId: string;
      ({ projectId, apiKey } = await app.ctx.newProject());
      scenario = await executionScenario(app, {
        projectId,
        scheme: 'no_auth',
        function: pingFunction(`${upstream.url}/api`),
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

    it.runIf(revision === '2026-07-28')(
      'carries a subscriptions/listen stream: a tool-list change arrives',
      async () => {
        const { client } = await spawnBridge(['--api-key', apiKey, '--owner', scenario.owner, '--mode', 'direct']);
        const modern = client as unknown as ModernClient;
        let changed!: () => void;
        const change = new Promise<void>((resolve) => (changed = resolve));
        modern.setNotificationHandler('notifications/tools/list_changed', () => changed());
        const subscription = await modern.listen({ toolsListChanged: true });
        expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
        const patched = await app.patch(`/v1/app-configurations/${scenario.app.name}`, { enabled: false }, { apiKey });
        expect(patched.status).toBe(200);
        await change;
        await app.patch(`/v1/app-configurations/${scenario.app.name}`, { enabled: true }, { apiKey });
        await client.close();
      },
    );

    it('answers a request refused by the service (wrong key) with a JSON-RPC error', async () => {
      const log: string[] = [];
      const refused = /Invalid credentials: the API key or MCP token is unknown, revoked or expired/;
      if (revision === '2025-11-25') {
        await expect(spawnBridge(['--api-key', 'pb_wrong'], log)).rejects.toThrow(refused);
      } else {
        // The v2 client reports the refused server/discover probe as a failed negotiation (its
        // probe runs on a sibling process); what the bridge answers that probe is read off its stdout.
        await expect(spawnBridge(['--api-key', 'pb_wrong'], log)).rejects.toThrow(/negotiation failed/);
        const bridge = spawn(process.execPath, [BIN, 'mcp', '--url', app.url, '--api-key', 'pb_wrong'], {
          env: { PATH: process.env.PATH ?? '' },
        });
        const discover = {
          jsonrpc: '2.0',
          id: 1,
          method: 'server/discover',
          params: {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': revision,
              'io.modelcontextprotocol/clientInfo': { name: 'by-hand', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        };
        bridge.stdin.write(`${JSON.stringify(discover)}\n`);
        const [line] = (await once(createInterface({ input: bridge.stdout }), 'line')) as [string];
        bridge.stdin.end();
        const answer = JSON.parse(line) as { id: number; error: { message: string } };
        expect(answer.id).toBe(1);
        expect(answer.error.message).toMatch(refused);
      }
    });
  },
  // Each test spawns a Node process (twice for 2026-07-28); the shared machine is slow to start them.
  90_000,
);
