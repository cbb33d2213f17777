import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CatalogService } from '../../../src/catalog/catalog.service.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';
import { Upstream } from './upstream.js';

/**
 * The hot-path cache learns of writes from the services that make them: at once on the instance that
 * wrote, and through PostgreSQL NOTIFY on the others. The second instance here polls the change counters
 * only once an hour, so what it sees within the wait below came through the notification; the counters
 * (CACHE_SYNC_INTERVAL_MS) are the bound for writes made past the services (execute-function.db.e2e-spec.ts).
 */
describe('execution cache: writes through the services', () => {
  let app: TestApp;
  let upstream: Upstream;
  let project: TestProject;
  let catalogDir: string;

  beforeAll(async () => {
    app = await TestApp.start();
    upstream = await Upstream.start();
    project = await app.ctx.newProject();
    catalogDir = await mkdtemp(join(tmpdir(), 'patchbay-cache-'));
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
    await rm(catalogDir, { recursive: true, force: true });
  });

  let appCounter = 0;

  /** Imports (or re-imports) a one-function no_auth app through the catalogue import, its path as given. */
  async function importApp(name: string, path: string): Promise<void> {
    const dir = join(catalogDir, name.toLowerCase());
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, 'app.json'),
      JSON.stringify({
        name,
        display_name: name,
        provider: 'Patchbay tests',
        version: '1.0.0',
        description: 'An app of the execution cache tests.',
        logo: 'https://example.com/logo.svg',
        categories: ['Testing'],
        visibility: 'public',
        active: true,
        security_schemes: { no_auth: {} },
        default_security_credentials_by_scheme: {},
      }),
    );
    await writeFile(
      join(dir, 'functions.json'),
      JSON.stringify([
        {
          name: `${name}__PING`,
          description: 'Pings the upstream',
          tags: ['test'],
          visibility: 'public',
          active: true,
          protocol: 'rest',
          protocol_data: { method: 'GET', path, server_url: upstream.url },
          parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
        },
      ]),
    );
    const report = await app.app.get(CatalogService).importPaths([dir], { secrets: {} });
    expect(report.problems).toEqual([]);
  }

  /** An imported app, configured and linked through the API; `call(url)` executes its function there. */
  async function linkedApp(): Promise<{ name: string; accountId: string; call: (url: string) => Promise<number> }> {
    const name = `CACHE_APP_${++appCounter}`;
    await importApp(name, '/first');
    const configured = await app.post(
      '/v1/app-configurations',
      { app_name: name, security_scheme: 'no_auth' },
      { apiKey: project.apiKey },
    );
    expect(configured.status, configured.text).toBe(200);
    const linked = await app.post(
      '/v1/linked-accounts/no-auth',
      { app_name: name, linked_account_owner_id: 'owner' },
      { apiKey: project.apiKey },
    );
    expect(linked.status, linked.text).toBe(200);
    const call = async (url: string) => {
      const res = await fetch(`${url}/v1/functions/${name}__PING/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': project.apiKey },
        body: JSON.stringify({ linked_account_owner_id: 'owner' }),
      });
      return res.status;
    };
    return { name, accountId: (linked.body as { id: string }).id, call };
  }

  /** The path of the last upstream request of a successful run at `url`. */
  async function lastPath(call: (url: string) => Promise<number>, url: string): Promise<string | undefined> {
    expect(await call(url)).toBe(200);
    return upstream.received.at(-1)?.url;
  }

  it('sees each write at once on the instance that made it', async () => {
    const { name, accountId, call } = await linkedApp();
    expect(await call(app.url)).toBe(200);

    expect((await app.patch(`/v1/app-configurations/${name}`, { enabled: false })).status).toBe(200);
    expect(await call(app.url)).toBe(403);
    expect((await app.patch(`/v1/app-configurations/${name}`, { enabled: true })).status).toBe(200);
    expect(await call(app.url)).toBe(200);

    expect((await app.patch(`/v1/linked-accounts/${accountId}`, { enabled: false })).status).toBe(200);
    expect(await call(app.url)).toBe(403);
    expect((await app.patch(`/v1/linked-accounts/${accountId}`, { enabled: true })).status).toBe(200);
    expect(await call(app.url)).toBe(200);

    await importApp(name, '/second');
    expect(await lastPath(call, app.url)).toBe('/second');

    expect((await app.delete(`/v1/linked-accounts/${accountId}`)).status).toBe(204);
    expect(await call(app.url)).toBe(404);
  });

  // Instances share a PostgreSQL server; the embedded database belongs to exactly one process.
  it.runIf(inject('databaseTemplate').kind === 'server')(
    'sees each write made on another instance through NOTIFY, without waiting for the change counters',
    async () => {
      const { name, accountId, call } = await linkedApp();
      const second = await app.startAnotherInstance('cache reader', { CACHE_SYNC_INTERVAL_MS: '3600000' });
      const bound = { timeout: 5000, interval: 20 };
      try {
        const onSecond = () => call(second.url);
        // Warm: the second instance caches the function, the configuration and the account.
        expect(await onSecond()).toBe(200);

        expect((await app.patch(`/v1/app-configurations/${name}`, { enabled: false })).status).toBe(200);
        await expect.poll(onSecond, bound).toBe(403);
        expect((await app.patch(`/v1/app-configurations/${name}`, { enabled: true })).status).toBe(200);
        await expect.poll(onSecond, bound).toBe(200);

        expect((await app.patch(`/v1/linked-accounts/${accountId}`, { enabled: false })).status).toBe(200);
        await expect.poll(onSecond, bound).toBe(403);
        expect((await app.patch(`/v1/linked-accounts/${accountId}`, { enabled: true })).status).toBe(200);
        await expect.poll(onSecond, bound).toBe(200);

        await importApp(name, '/second');
        await expect.poll(() => lastPath(call, second.url), bound).toBe('/second');

        expect((await app.delete(`/v1/linked-accounts/${accountId}`)).status).toBe(204);
        await expect.poll(onSecond, bound).toBe(404);
      } finally {
        await second.app.close();
      }
    },
  );
});
