import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiImportService } from '../../../src/catalog/openapi/openapi-import.service.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from './upstream.js';

/**
 * Server variables of an imported document: their defaults, and the values an app configuration chooses
 * (`server_variables`), checked against what the document declares and used for the URL each request is
 * sent to. Two local upstreams stand for two hosts the `host` variable can name.
 */
describe('server variables: defaults, and values chosen per app configuration', { timeout: 120_000 }, () => {
  let app: TestApp;
  let first: Upstream;
  let second: Upstream;
  let folder: string;
  const owner = 'user-1';

  // `host` lists the two upstreams; `mirror` chooses a host freely, so it keeps its default.
  const document = (hosts: string[]) => ({
    openapi: '3.0.3',
    info: { title: 'Regions', version: '1' },
    servers: [
      {
        url: 'http://{host}/{version}',
        variables: {
          host: { default: hosts[0], enum: hosts },
          version: { default: 'v1', enum: ['v1', 'v2'] },
        },
      },
    ],
    paths: {
      '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } } },
      '/reports': {
        servers: [
          {
            url: 'http://{host}/reporting/{stage}',
            variables: { host: { default: hosts[0], enum: hosts }, stage: { default: 'live' } },
          },
        ],
        get: { operationId: 'listReports', responses: { '200': { description: 'ok' } } },
      },
      '/mirrored': {
        get: {
          operationId: 'listMirrored',
          servers: [{ url: 'http://{mirror}/m', variables: { mirror: { default: hosts[0] } } }],
          responses: { '200': { description: 'ok' } },
        },
      },
    },
  });

  beforeAll(async () => {
    app = await TestApp.start();
    [first, second] = await Promise.all([Upstream.start(), Upstream.start()]);
    folder = mkdtempSync(join(tmpdir(), 'patchbay-servers-'));
    const file = join(folder, 'regions.json');
    writeFileSync(file, JSON.stringify(document([new URL(first.url).host, new URL(second.url).host])));
    const report = await app.app.get(OpenApiImportService).importSources([file], { secrets: {} });
    expect(report.refused).toEqual([]);
    await app.ctx.newProject();
  }, 180_000);

  afterAll(async () => {
    await first?.close();
    await second?.close();
    await app?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const execute = (name: string) =>
    app.post(`/v1/functions/REGIONS__${name}/execute`, { function_input: {}, linked_account_owner_id: owner });

  it('records the server template with each function and its defaults in server_url', async () => {
    const rows = await app.dataSource.query(
      `SELECT protocol_data FROM functions WHERE app_name = 'REGIONS' ORDER BY name COLLATE "C"`,
    );
    const hosts = [new URL(first.url).host, new URL(second.url).host];
    expect(rows.map((row: { protocol_data: Record<string, any> }) => row.protocol_data.server_url)).toEqual([
      `http://${hosts[0]}/m`,
      `http://${hosts[0]}/v1`,
      `http://${hosts[0]}/reporting/live`,
    ]);
    expect(rows[1].protocol_data.openapi.server).toEqual({
      url: 'http://{host}/{version}',
      variables: { host: { default: hosts[0], enum: hosts }, version: { default: 'v1', enum: ['v1', 'v2'] } },
    });
  });

  it('refuses, with 422 naming each variable, values the document does not allow', async () => {
    const refused = await app.post('/v1/app-configurations', {
      app_name: 'REGIONS',
      security_scheme: 'no_auth',
      server_variables: { version: 'v3', region: 'eu', stage: 7, mirror: 'evil.example.com', host: 'evil.example.com' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      {
        loc: ['body', 'server_variables', 'version'],
        type: 'value_error',
        msg: `server variable version: "v3" is not one of the values the app's document allows: v1, v2`,
      },
      {
        loc: ['body', 'server_variables', 'region'],
        type: 'value_error',
        msg: 'App REGIONS has no server variable region; it declares: host, mirror, stage, version',
      },
      { loc: ['body', 'server_variables', 'stage'], type: 'string_type', msg: 'Input should be a valid string' },
      {
        loc: ['body', 'server_variables', 'mirror'],
        type: 'value_error',
        msg: expect.stringMatching(
          /^server variable mirror: it chooses the host of http:\/\/\{mirror\}\/m and the app's document lists no values for it \(enum\), so only its default ".*" is allowed/,
        ),
      },
      {
        loc: ['body', 'server_variables', 'host'],
        type: 'value_error',
        msg: expect.stringMatching(/^server variable host: "evil.example.com" is not one of the values/),
      },
    ]);
    const notObject = await app.post('/v1/app-configurations', {
      app_name: 'REGIONS',
      security_scheme: 'no_auth',
      server_variables: ['v2'],
    });
    expect(notObject.status).toBe(422);
    expect(notObject.body.detail[0].loc).toEqual(['body', 'server_variables']);
  });

  it('sends to the defaults until the configuration chooses, then to the URL built from its values', async () => {
    const created = await app.post('/v1/app-configurations', { app_name: 'REGIONS', security_scheme: 'no_auth' });
    expect(created.status).toBe(200);
    expect(created.body.server_variables).toEqual({});
    expect(
      (await app.post('/v1/linked-accounts/no-auth', { app_name: 'REGIONS', linked_account_owner_id: owner })).status,
    ).toBe(200);

    expect((await execute('LIST_PETS')).body).toEqual({ success: true, data: { ok: true }, error: null });
    expect(first.last.url).toBe('/v1/pets');

    const chosen = { host: new URL(second.url).host, version: 'v2' };
    const updated = await app.patch('/v1/app-configurations/REGIONS', { server_variables: chosen });
    expect(updated.status).toBe(200);
    expect(updated.body.server_variables).toEqual(chosen);
    expect((await app.get('/v1/app-configurations/REGIONS')).body.server_variables).toEqual(chosen);

    const before = first.received.length;
    expect((await execute('LIST_PETS')).body.success).toBe(true);
    expect(second.last.url).toBe('/v2/pets');
    // An operation's own server takes the values of the variables it declares too, the others at their defaults.
    expect((await execute('LIST_REPORTS')).body.success).toBe(true);
    expect(second.last.url).toBe('/reporting/live/reports');
    expect(first.received.length).toBe(before);
    // A server without the chosen variables keeps its own URL.
    expect((await execute('LIST_MIRRORED')).body.success).toBe(true);
    expect(first.last.url).toBe('/m/mirrored');

    // Absent or null leaves the values; `{}` returns every variable to its default.
    expect(
      (await app.patch('/v1/app-configurations/REGIONS', { server_variables: null })).body.server_variables,
    ).toEqual(chosen);
    expect((await app.patch('/v1/app-configurations/REGIONS', { server_variables: {} })).body.server_variables).toEqual(
      {},
    );
    expect((await execute('LIST_PETS')).body.success).toBe(true);
    expect(first.last.url).toBe('/v1/pets');
  });

  it('an ACI-format app declares no server variable: any value is refused', async () => {
    await app.ctx.newApp({ name: 'PLAIN', security_schemes: { no_auth: {} } });
    const refused = await app.post('/v1/app-configurations', {
      app_name: 'PLAIN',
      security_scheme: 'no_auth',
      server_variables: { version: 'v2' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      {
        loc: ['body', 'server_variables', 'version'],
        type: 'value_error',
        msg: 'App PLAIN has no server variable version; it declares none',
      },
    ]);
  });
});
