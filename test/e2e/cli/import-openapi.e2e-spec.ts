import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedEnv, runCli } from '../../helpers/cli.js';

const FIXTURES = 'test/fixtures/openapi';

describe('patchbay catalog import-openapi (embedded database)', { timeout: 240_000 }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-openapi-'));
    env = embeddedEnv(dataDir, { NOTES_CLIENT_ID: 'notes-client' });
  });

  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('imports 3.0 YAML, 3.1 JSON and Swagger 2.0 documents, then reports them unchanged', async () => {
    const files = ['petstore-3.0.yaml', 'notes-3.1.json', 'todo-swagger-2.0.json'].map((f) => `${FIXTURES}/${f}`);
    const first = await runCli(['catalog', 'import-openapi', ...files, '--json'], env);
    expect(first.stderr).not.toMatch(/refused/);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.refused).toEqual([]);
    expect(report.apps.added).toEqual(['PET_STORE', 'NOTES', 'TODO']);
    // PUT /upload's binary body is sent as the document declares (base64 in the input), so it is imported too.
    expect(report.functions.added).toHaveLength(6 + 2 + 1);
    expect(report.functions.added).toContain('PET_STORE__UPLOAD');
    expect(report.documents[0].skipped.map((s: { operation: string }) => s.operation)).toEqual(['GET /old']);
    expect(report.unfilled_placeholders).toEqual([
      { app: 'NOTES', path: '/security_schemes/oauth2/client_secret', placeholder: 'NOTES_CLIENT_SECRET' },
    ]);

    const again = JSON.parse((await runCli(['catalog', 'import-openapi', ...files, '--json'], env)).stdout);
    expect(again.apps).toEqual({ added: [], updated: [], unchanged: 3 });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: 9 });
  });

  it('a changed selection updates the app and adds functions; --dry-run writes nothing', async () => {
    const file = `${FIXTURES}/petstore-3.0.yaml`;
    const dry = JSON.parse(
      (await runCli(['catalog', 'import-openapi', file, '--include-deprecated', '--dry-run', '--json'], env)).stdout,
    );
    expect(dry.dry_run).toBe(true);
    expect(dry.functions.added).toEqual(['PET_STORE__OLD_THING']);
    const real = JSON.parse(
      (await runCli(['catalog', 'import-openapi', file, '--include-deprecated', '--json'], env)).stdout,
    );
    expect(real.functions.added).toEqual(['PET_STORE__OLD_THING']);
  });

  it('refuses documents it cannot take with reasons, imports the others, exits 1', async () => {
    const result = await runCli(
      [
        'catalog',
        'import-openapi',
        `${FIXTURES}/no-server.json`,
        `${FIXTURES}/remote-ref.json`,
        `${FIXTURES}/split/main.yaml`,
        '--server',
        'ignored-not-absolute',
      ],
      env,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/3 document\(s\) refused/);
    expect(result.stderr).toMatch(
      /no-server\.json: the server URL "ignored-not-absolute" is not an absolute http\(s\) URL: give one with --server/,
    );
    expect(result.stderr).toMatch(
      /remote-ref\.json: references http:\/\/127\.0\.0\.1:9\/schema\.json: remote references are not fetched/,
    );

    const ok = await runCli(
      ['catalog', 'import-openapi', `${FIXTURES}/no-server.json`, '--server', 'https://nowhere.example.com'],
      env,
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/Apps: 1 added/);
  });
});
