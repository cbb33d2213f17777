import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedEnv, runCli } from '../../helpers/cli.js';
import { McpTestServer } from '../../helpers/mcp-test-server.js';

describe('patchbay catalog add-mcp and catalog sync (embedded database)', { timeout: 240_000 }, () => {
  let dataDir: string;
  let server: McpTestServer;
  let tools = ['search_issues', 'create_issue'];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-add-mcp-'));
    server = await McpTestServer.start({
      era: 'modern',
      apiKey: { header: 'X-Api-Key', value: 'k-123' },
      tools: () => tools.map((name) => ({ name, description: `Does ${name}.`, inputSchema: { type: 'object' } })),
      call: () => ({ content: [] }),
    });
  });

  afterAll(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('adds a server behind an API key, then syncs a changed tool list', async () => {
    const env = embeddedEnv(dataDir, { MCP_SERVERS_ALLOW_PRIVATE_NETWORKS: 'true' });
    const added = await runCli(
      [
        'catalog',
        'add-mcp',
        server.url,
        '--app-name',
        'TRACKER',
        '--auth',
        'api-key:X-Api-Key',
        '--token',
        'k-123',
        '--json',
      ],
      env,
    );
    expect(added.stderr).not.toMatch(/error|refused/i);
    expect(added.code).toBe(0);
    const report = JSON.parse(added.stdout);
    expect(report).toMatchObject({
      app: 'TRACKER',
      security_schemes: ['api_key'],
      server: { name: 'test-modern', protocol_version: '2026-07-28' },
    });
    expect(report.functions.added.sort()).toEqual(['TRACKER__CREATE_ISSUE', 'TRACKER__SEARCH_ISSUES']);
    // The listing credential is never stored: not in the report, not in the data directory's output.
    expect(added.stdout).not.toContain('k-123');

    tools = ['search_issues', 'close_issue'];
    const synced = await runCli(['catalog', 'sync', 'TRACKER', '--token', 'k-123', '--json'], env);
    expect(synced.code).toBe(0);
    const again = JSON.parse(synced.stdout);
    expect(again.functions.added).toEqual(['TRACKER__CLOSE_ISSUE']);
    expect(again.functions.deactivated).toEqual(['TRACKER__CREATE_ISSUE']);
    expect(again.functions.unchanged).toBe(1);
  });

  it('names the reason when the server wants credentials, and the right flags when --auth is wrong', async () => {
    const env = embeddedEnv(dataDir, { MCP_SERVERS_ALLOW_PRIVATE_NETWORKS: 'true' });
    const refused = await runCli(['catalog', 'add-mcp', server.url, '--app-name', 'NOPE'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /requires credentials to list its tools: give --auth oauth2, or --auth bearer \(or --auth api-key:HEADER\) and --token/,
    );
    const wrong = await runCli(['catalog', 'add-mcp', server.url, '--auth', 'basic'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/--auth must be none, bearer, api-key:HEADER or oauth2/);
    const unknown = await runCli(['catalog', 'sync', 'NO_SUCH_APP'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/NO_SUCH_APP is not a remote MCP server/);
  });
});
