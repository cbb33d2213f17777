import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedEnv, runCli, startServe, stopServe } from '../../helpers/cli.js';
import { ACI_CATALOG as ACI, ACI_PRESENT, needsAci } from '../../helpers/shared-data.js';

const FIXTURES = 'test/fixtures/catalog';

// Each command boots a process and the embedded database: generous bounds for a loaded 2-core machine.
describe('patchbay command line (embedded database)', { timeout: 180_000 }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-cli-'));
    env = embeddedEnv(dataDir);
  });

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('migrate applies the migrations, then finds nothing to do', async () => {
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/Applied: Initial/);
    const second = await runCli(['migrate'], env);
    expect(second.stdout.trim()).toBe('Database is up to date');
  });

  let projectId: string;
  let firstKey: string;

  it('projects create --json prints exactly one JSON object with the id and a key', async () => {
    const result = await runCli(['projects', 'create', '--name', 'cli test', '--json'], env);
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout);
    expect(Object.keys(parsed).sort()).toEqual(['api_key', 'project_id']);
    expect(parsed.project_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(parsed.api_key).toMatch(/^pb_/);
    projectId = parsed.project_id;
    firstKey = parsed.api_key;
  });

  it('projects create without --name fails with a usage message', async () => {
    const result = await runCli(['projects', 'create'], env);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('--name');
  });

  it('imports the test catalogue completely, then reports it unchanged', async () => {
    const first = await runCli(['catalog', 'import', `${FIXTURES}/valid`, '--json'], env);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.problems).toEqual([]);
    expect(report.apps.added.sort()).toEqual(['OAUTH_DEMO', 'WEATHER_DEMO']);
    expect(report.functions.added.length).toBeGreaterThan(1);

    const again = JSON.parse((await runCli(['catalog', 'import', `${FIXTURES}/valid`, '--json'], env)).stdout);
    expect(again.apps).toEqual({ added: [], updated: [], unchanged: 2 });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: report.functions.added.length });
  });

  it.skipIf(!ACI_PRESENT)(needsAci('imports the ACI catalogue completely, then reports it unchanged'), async () => {
    const first = await runCli(['catalog', 'import', ACI, '--json'], env);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.problems).toEqual([]);
    expect(report.apps.added).toHaveLength(98);
    expect(report.functions.added).toHaveLength(987);
    expect(report.unfilled_placeholders.length).toBeGreaterThan(0);

    const again = JSON.parse((await runCli(['catalog', 'import', ACI, '--json'], env)).stdout);
    expect(again.apps).toEqual({ added: [], updated: [], unchanged: 98 });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: 987 });
  });

  it('fills placeholders from a --secrets file and reports the app as updated', async () => {
    const secrets = join(dataDir, 'secrets.env');
    writeFileSync(secrets, '# test\nOAUTH_DEMO_CLIENT_ID=demo-client\nOAUTH_DEMO_CLIENT_SECRET="s3cret-value"\n');
    const plain = JSON.parse((await runCli(['catalog', 'import', `${FIXTURES}/valid`, '--json'], env)).stdout);
    expect(plain.unfilled_placeholders.map((u: { placeholder: string }) => u.placeholder).sort()).toEqual([
      'OAUTH_DEMO_CLIENT_ID',
      'OAUTH_DEMO_CLIENT_SECRET',
    ]);
    const filled = await runCli(['catalog', 'import', `${FIXTURES}/valid`, '--secrets', secrets, '--json'], env);
    const report = JSON.parse(filled.stdout);
    expect(report.unfilled_placeholders).toEqual([]);
    expect(report.apps.updated).toEqual(['OAUTH_DEMO']);
    expect(filled.stdout).not.toContain('s3cret-value');
  });

  it('refuses an invalid catalogue whole, naming file, JSON path and reason', async () => {
    const result = await runCli(['catalog', 'import', `${FIXTURES}/invalid`], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nothing was written');
    expect(result.stderr).toMatch(/bad_app\/app\.json at \/: unknown key "colour"/);
    expect(result.stderr).toMatch(/bad_app\/functions\.json at \/0\/protocol_data\/method: must be one of/);
    // GOOD_APP was valid but must not have been imported on its own.
    const dry = JSON.parse(
      (await runCli(['catalog', 'import', `${FIXTURES}/invalid/good_app`, '--dry-run', '--json'], env)).stdout,
    );
    expect(dry.apps.added).toEqual(['GOOD_APP']);
    expect(dry.imported).toBe(false);
  });

  it('--dry-run writes nothing', async () => {
    await runCli(['catalog', 'import', `${FIXTURES}/invalid/good_app`, '--dry-run'], env);
    const real = JSON.parse(
      (await runCli(['catalog', 'import', `${FIXTURES}/invalid/good_app`, '--json'], env)).stdout,
    );
    expect(real.apps.added).toEqual(['GOOD_APP']);
  });

  it('serves the keys it made; a second process is refused while it runs; revoked keys stop working', async () => {
    const server = await startServe(env);
    try {
      const ok = await fetch(`${server.url}/v1/apps/GOOD_APP`, { headers: { 'x-api-key': firstKey } });
      expect(ok.status).toBe(200);

      const locked = await runCli(['projects', 'create', '--name', 'second'], env);
      expect(locked.code).toBe(1);
      expect(locked.stderr).toMatch(/in use by patchbay serve \(pid \d+/);
      expect(locked.stderr).not.toContain('    at ');
    } finally {
      expect(await stopServe(server.child)).toBe(0);
    }

    const created = await runCli(['api-keys', 'create', '--project', projectId, '--json'], env);
    expect(created.code).toBe(0);
    const second = JSON.parse(created.stdout);
    expect(second.project_id).toBe(projectId);

    expect(second.expires_at).toBeNull();

    const expiring = await runCli(['api-keys', 'create', '--project', projectId, '--expires-in', '30d', '--json'], env);
    expect(expiring.code).toBe(0);
    const third = JSON.parse(expiring.stdout);
    const days = (Date.parse(third.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    const unitless = await runCli(['api-keys', 'create', '--project', projectId, '--expires-in', '10'], env);
    expect(unitless.code).toBe(2); // a usage error
    expect(unitless.stderr).toContain('--expires-in');
    const notADate = await runCli(['api-keys', 'create', '--project', projectId, '--expires-at', 'tomorrow'], env);
    expect(notADate.code).toBe(2);
    expect(notADate.stderr).toContain('RFC 3339');
    const past = await runCli(
      ['api-keys', 'create', '--project', projectId, '--expires-at', '2020-01-01T00:00:00Z'],
      env,
    );
    expect(past.code).toBe(1);
    expect(past.stderr).toContain('not in the future');

    const listed = await runCli(['api-keys', 'list', '--project', projectId, '--json'], env);
    expect(listed.code).toBe(0);
    const keys = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(keys.map((key) => key.id)).toEqual(expect.arrayContaining([second.api_key_id, third.api_key_id]));
    expect(keys.find((key) => key.id === third.api_key_id)?.expires_at).toBe(third.expires_at);
    // The first key served a request above: its last use is recorded.
    expect(keys.filter((key) => key.last_used_at !== null)).toHaveLength(1);
    for (const secret of [firstKey, second.api_key, third.api_key]) {
      expect(listed.stdout).not.toContain(secret);
    }
    const table = await runCli(['api-keys', 'list', '--project', projectId], env);
    expect(table.stdout.split('\n')[0]).toBe('id\tcreated_at\texpires_at\tlast_used_at\trevoked_at');

    const revokeFirst = await runCli(['api-keys', 'revoke', second.api_key_id], env);
    expect(revokeFirst.code).toBe(0);
    const revokeAgain = await runCli(['api-keys', 'revoke', second.api_key_id], env);
    expect(revokeAgain.code).toBe(1);
    expect(revokeAgain.stderr).toContain(`API key ${second.api_key_id} not found`);

    const restarted = await startServe(env);
    try {
      const revoked = await fetch(`${restarted.url}/v1/apps/GOOD_APP`, { headers: { 'x-api-key': second.api_key } });
      expect(revoked.status).toBe(401);
      const stillValid = await fetch(`${restarted.url}/v1/apps/GOOD_APP`, { headers: { 'x-api-key': firstKey } });
      expect(stillValid.status).toBe(200);
    } finally {
      await stopServe(restarted.child);
    }
  });

  it('api-keys create for an unknown project fails clearly', async () => {
    const result = await runCli(['api-keys', 'create', '--project', '00000000-0000-4000-8000-000000000000'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Project 00000000-0000-4000-8000-000000000000 not found');
  });

  it('serve on a port already in use exits with an error and leaves the data folder free', async () => {
    const busy = createServer();
    await new Promise<void>((resolveListen) => busy.listen(0, '127.0.0.1', resolveListen));
    try {
      const { port } = busy.address() as AddressInfo;
      const result = await runCli(['serve', '--port', String(port)], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('EADDRINUSE');
    } finally {
      busy.close();
    }
    // The lock was released: another command opens the folder at once.
    const next = await runCli(['migrate'], env);
    expect(next.code).toBe(0);
  });

  it('stops with a message naming an invalid setting', async () => {
    const result = await runCli(['migrate'], { ...env, PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('PORT');
  });
});
