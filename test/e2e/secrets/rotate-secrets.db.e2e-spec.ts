import { createCipheriv, randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { CLI_ACTOR } from '../../../src/audit/actor.js';
import { SealedColumnsRepository } from '../../../src/secrets/sealed-columns.repository.js';
import { type RotationReport, SecretsRotationService } from '../../../src/secrets/secrets-rotation.service.js';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { withWriteBetween } from '../../helpers/between-read-and-write.js';
import { runCli } from '../../helpers/cli.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';

const onServer = inject('databaseTemplate').kind === 'server';
const oldKey = randomBytes(32);
const newKey = randomBytes(32);
const ring = `${newKey.toString('base64')},${oldKey.toString('base64')}`;
const oldBox = new SecretBox(oldKey);
const newOnly = new SecretBox(newKey);
const SEALED = [
  ['linked_accounts', 'credentials', 'id'],
  ['app_configurations', 'secrets', 'id'],
  ['apps', 'secrets', 'name'],
] as const;

/** The form sealed before the key ring (`v1.<payload>`, no key named). */
function sealV1(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

/**
 * `patchbay secrets rotate` while the service serves executions. On PostgreSQL: the real command in its
 * own process, two other instances (ring "new,old") executing throughout, then an instance whose ring
 * holds only the new key. On the embedded database one process holds the data (a second one, the CLI
 * included, is refused), so the rotation runs through the serving app's own SecretsRotationService
 * while that app executes, and the new key alone must open every stored value afterwards.
 */
describe('sealing-key rotation (patchbay secrets rotate)', () => {
  let app: TestApp;
  let upstream: Upstream;
  let apiKey: string;
  let scenarios: Scenario[];
  const others: NestFastifyApplication[] = [];

  const rows = async (table: string, column: string, key: string) =>
    await app.dataSource.query<{ key: string; sealed: string }[]>(
      `SELECT "${key}"::text AS key, "${column}" AS sealed FROM "${table}" WHERE "${column}" IS NOT NULL`,
    );

  /** Re-writes every stored secret under the old key only, as a deployment before the ring left it. */
  async function sealEverythingUnderOldKey(): Promise<void> {
    const box = app.app.get(SecretBox);
    for (const [table, column, key] of SEALED) {
      for (const row of await rows(table, column, key)) {
        await app.dataSource.query(`UPDATE "${table}" SET "${column}" = $1 WHERE "${key}"::text = $2`, [
          oldBox.seal(box.open(row.sealed)),
          row.key,
        ]);
      }
    }
    // One account in the form sealed before key rings existed.
    await app.dataSource.query(`UPDATE "linked_accounts" SET "credentials" = $1 WHERE "id" = $2`, [
      sealV1(oldKey, JSON.stringify({ api_key: 'key-0' })),
      scenarios[0].account.id,
    ]);
  }

  const execute = (url: string, scenario: Scenario) =>
    fetch(`${url}/v1/functions/${scenario.fn.name}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ linked_account_owner_id: scenario.owner }),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as { success: boolean } }));

  /** Executes every scenario round-robin over `urls` until `until` settles; returns the failures. */
  async function executeDuring<T>(urls: string[], until: Promise<T>): Promise<{ result: T; failures: unknown[] }> {
    let done = false;
    const failures: unknown[] = [];
    let executed = 0;
    const settled = until.finally(() => {
      done = true;
    });
    const loop = async (url: string) => {
      while (!done) {
        for (const scenario of scenarios) {
          const res = await execute(url, scenario);
          executed += 1;
          if (res.status !== 200 || !res.body.success) {
            failures.push(res);
          }
        }
      }
    };
    const [result] = await Promise.all([settled, ...urls.map(loop)]);
    expect(executed).toBeGreaterThan(0);
    return { result, failures };
  }

  beforeAll(async () => {
    app = await TestApp.start({ SECRETS_KEY: '', SECRETS_KEYS: ring });
    upstream = await Upstream.start();
    const project = await app.ctx.newProject();
    apiKey = project.apiKey;
    scenarios = [];
    for (let i = 0; i < 6; i += 1) {
      scenarios.push(
        await executionScenario(app, {
          projectId: project.projectId,
          scheme: 'api_key',
          settings: { location: 'header', name: 'x-upstream-key' },
          appSecrets: { oauth2_client_secret: `app-client-secret-${i}` },
          configuration: {
            secrets: app.app.get(SecretBox).sealJson({ oauth2_client_secret: `client-secret-${i}` }),
          },
          credentials: { api_key: `key-${i}` },
          function: {
            protocol: 'rest',
            protocol_data: { method: 'GET', path: `/ping/${i}`, server_url: upstream.url },
            parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
          },
        }),
      );
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(others.map((other) => other.close()));
    await upstream?.close();
    await app?.close();
  });

  /** Every stored secret is under the new key, and the new key alone opens it to what was stored. */
  async function expectEverythingUnderNewKeyOnly(): Promise<void> {
    const prefix = `v2.${SecretBox.keyId(newKey)}.`;
    for (const [table, column, key] of SEALED) {
      const stored = await rows(table, column, key);
      expect(stored.length).toBeGreaterThanOrEqual(scenarios.length);
      for (const row of stored) {
        expect(row.sealed.startsWith(prefix)).toBe(true);
        expect(() => newOnly.open(row.sealed)).not.toThrow();
      }
    }
    const credentials = await Promise.all(
      scenarios.map(async (s) => {
        const [row] = await app.dataSource.query<{ credentials: string }[]>(
          `SELECT "credentials" FROM "linked_accounts" WHERE "id" = $1`,
          [s.account.id],
        );
        return newOnly.openJson<{ api_key: string }>(row.credentials).api_key;
      }),
    );
    expect(credentials).toEqual(scenarios.map((_s, i) => `key-${i}`));
  }

  it('re-seals every stored secret while executions run, none failing, and the old key can then go', async () => {
    await sealEverythingUnderOldKey();
    upstream.reset();
    let urls = [app.url];
    let rotation: Promise<RotationReport>;
    if (onServer) {
      const b = await app.startAnotherInstance('instance b', { SECRETS_KEY: '', SECRETS_KEYS: ring });
      const c = await app.startAnotherInstance('instance c', { SECRETS_KEY: '', SECRETS_KEYS: ring });
      others.push(b.app, c.app);
      urls = [b.url, c.url];
      const env = {
        ...process.env,
        LOG_LEVEL: 'warn',
        SECRETS_KEY: '',
        SECRETS_KEYS: ring,
        DATABASE_URL: (app.dataSource.options as { url: string }).url,
      };
      rotation = runCli(['secrets', 'rotate', '--batch-size', '5', '--json'], env).then((result) => {
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        return JSON.parse(result.stdout) as RotationReport;
      });
    } else {
      rotation = app.app.get(SecretsRotationService).rotate(CLI_ACTOR, { batchSize: 5 });
    }
    const { result: report, failures } = await executeDuring(urls, rotation);
    expect(failures).toEqual([]);
    expect(report.key_id).toBe(SecretBox.keyId(newKey));
    expect(report.remaining).toBe(0);
    expect(report.unreadable).toBe(0);
    // Every value written under the old key was re-sealed (each scenario: account, configuration, app).
    expect(report.resealed).toBeGreaterThanOrEqual(3 * scenarios.length);
    expect(upstream.received.length).toBeGreaterThan(0);
    for (const received of upstream.received) {
      expect(received.headers['x-upstream-key']).toBe(`key-${received.path.split('/').pop()}`);
    }
    await expectEverythingUnderNewKeyOnly();

    // Re-running finds nothing left to do (resumable).
    const again = await app.app.get(SecretsRotationService).rotate(CLI_ACTOR, { batchSize: 5 });
    expect([again.resealed, again.remaining]).toEqual([0, 0]);

    if (onServer) {
      const withoutOldKey = await app.startAnotherInstance('new key only', {
        SECRETS_KEY: '',
        SECRETS_KEYS: newKey.toString('hex'),
      });
      others.push(withoutOldKey.app);
      for (const scenario of scenarios) {
        expect((await execute(withoutOldKey.url, scenario)).status).toBe(200);
      }
    }
  }, 120_000);

  it('leaves a value changed between its read and its write as the concurrent writer left it; a re-run seals it', async () => {
    const account = scenarios[1].account;
    await app.dataSource.query(`UPDATE "linked_accounts" SET "credentials" = $1 WHERE "id" = $2`, [
      oldBox.sealJson({ api_key: 'key-1' }),
      account.id,
    ]);
    const concurrent = oldBox.sealJson({ api_key: 'key-1-relinked' });
    const service = app.app.get(SecretsRotationService);
    const report = await withWriteBetween(
      app.app.get(SealedColumnsRepository),
      async () => {
        await app.dataSource.query(`UPDATE "linked_accounts" SET "credentials" = $1 WHERE "id" = $2`, [
          concurrent,
          account.id,
        ]);
      },
      () => service.rotate(CLI_ACTOR),
    );
    const linked = report.columns.find((column) => column.column === 'linked_accounts.credentials');
    expect(linked).toMatchObject({ resealed: 0, changed_concurrently: 1, remaining: 1 });
    const [kept] = await app.dataSource.query<{ credentials: string }[]>(
      `SELECT "credentials" FROM "linked_accounts" WHERE "id" = $1`,
      [account.id],
    );
    expect(kept.credentials).toBe(concurrent);

    const rerun = await service.rotate(CLI_ACTOR);
    expect([rerun.resealed, rerun.remaining]).toEqual([1, 0]);
    const [after] = await app.dataSource.query<{ credentials: string }[]>(
      `SELECT "credentials" FROM "linked_accounts" WHERE "id" = $1`,
      [account.id],
    );
    expect(newOnly.openJson(after.credentials)).toEqual({ api_key: 'key-1-relinked' });
  });

  it('records every run in the audit log, by the command line, with its counts and never a key', async () => {
    const runs = await app.dataSource.query<
      { actor_type: string; actor_id: string | null; project_id: string | null; resource_id: string; after: object }[]
    >(
      `SELECT actor_type, actor_id, project_id, resource_id, after FROM audit_events
        WHERE action = 'sealing_key.rotated' ORDER BY created_at`,
    );
    // The first rotation, its re-run, the run with a concurrent write, and the one after it.
    expect(runs).toHaveLength(4);
    for (const run of runs) {
      expect(run).toMatchObject({ actor_type: 'cli', actor_id: null, project_id: null });
      expect(run.resource_id).toBe(SecretBox.keyId(newKey));
    }
    expect(runs[0].after).toMatchObject({ key_id: SecretBox.keyId(newKey), remaining: 0, unreadable: 0 });
    expect(runs.slice(2).map((run) => run.after)).toEqual([
      { key_id: SecretBox.keyId(newKey), resealed: 0, changed_concurrently: 1, unreadable: 0, remaining: 1 },
      { key_id: SecretBox.keyId(newKey), resealed: 1, changed_concurrently: 0, unreadable: 0, remaining: 0 },
    ]);
    const recorded = JSON.stringify(runs);
    for (const key of [newKey, oldKey]) {
      expect(recorded).not.toContain(key.toString('base64'));
      expect(recorded).not.toContain(key.toString('hex').slice(0, 16));
    }
    expect(recorded).not.toContain('key-1-relinked');
  });
});
