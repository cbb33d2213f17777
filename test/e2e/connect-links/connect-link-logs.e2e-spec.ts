import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedEnv, runCli, startServe, stopServe } from '../../helpers/cli.js';

const SECRET = 'sk-connect-log-check-4b7e2a';

/**
 * The real `patchbay serve` process at LOG_LEVEL=trace, its whole output captured: neither the
 * link's token nor a submitted secret may appear in any log line.
 */
describe('connect links never log a token or a secret', { timeout: 180_000 }, () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-connect-logs-'));
  });

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('at trace level, through a whole link', async () => {
    // One api_key app of the starter catalogue and a project, prepared before the service starts.
    const imported = await runCli(['catalog', 'import', 'src/catalog/starter/brave_search'], embeddedEnv(dataDir));
    expect(imported.code, imported.stderr).toBe(0);
    const project = await runCli(['projects', 'create', '--name', 'logs', '--json'], embeddedEnv(dataDir));
    const apiKey = (JSON.parse(project.stdout) as { api_key: string }).api_key;
    const server = await startServe(embeddedEnv(dataDir, { LOG_LEVEL: 'trace' }));
    let token = '';
    let linkId = '';
    try {
      const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
      const configured = await fetch(`${server.url}/v1/app-configurations`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ app_name: 'BRAVE_SEARCH', security_scheme: 'api_key' }),
      });
      expect(configured.status).toBe(200);
      const created = await fetch(`${server.url}/v1/linked-accounts/connect-links`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ app_name: 'BRAVE_SEARCH', linked_account_owner_id: 'log-user' }),
      });
      const link = (await created.json()) as { id: string; url: string };
      const url = new URL(link.url);
      token = url.searchParams.get('token') as string;
      linkId = link.id;

      const opened = await fetch(`${server.url}${url.pathname}${url.search}`, { redirect: 'manual' });
      expect(opened.status).toBe(303);
      const cookie = (opened.headers.get('set-cookie') as string).split(';')[0];
      const page = await (await fetch(`${server.url}/connect/${link.id}`, { headers: { cookie } })).text();
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] as string;
      const posted = await fetch(`${server.url}/connect/${link.id}`, {
        method: 'POST',
        headers: { cookie, origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf_token: csrf, api_key: SECRET }),
      });
      expect(posted.status).toBe(200);
    } finally {
      expect(await stopServe(server.child)).toBe(0);
    }
    const output = server.output();
    // The requests were logged (so the check below looks at real request lines)…
    expect(output).toContain(`/connect/${linkId}?token=`);
    // …without the token or the secret.
    expect(token.length).toBeGreaterThan(40);
    expect(output).not.toContain(token);
    expect(output).not.toContain(SECRET);
  });
});
