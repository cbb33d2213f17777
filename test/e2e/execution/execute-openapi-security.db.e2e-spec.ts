import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiImportService } from '../../../src/catalog/openapi/openapi-import.service.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from './upstream.js';

const ok = { '200': { description: 'ok' } };

/**
 * Security requirements with alternatives (OR) and combinations (AND), from a hand-made document: the linked
 * account's scheme picks the alternative, the other schemes of a combination take the app configuration's
 * `extra_credentials`, and a combination that cannot be satisfied is refused naming what is missing, before
 * anything is sent. Each test asserts exactly what the local upstream received.
 */
describe('security requirements: alternatives (OR) and combinations (AND)', { timeout: 120_000 }, () => {
  let app: TestApp;
  let upstream: Upstream;
  let folder: string;
  let bearerKey: string;

  const document = (server: string) => ({
    openapi: '3.0.3',
    info: { title: 'Combo', version: '1' },
    servers: [{ url: server }],
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
        AppId: { type: 'apiKey', in: 'header', name: 'X-App-Id' },
        Token: { type: 'apiKey', in: 'query', name: 'token' },
        Bearer: { type: 'http', scheme: 'bearer' },
        Digest: { type: 'http', scheme: 'digest' },
      },
    },
    // (ApiKey and AppId) or Bearer, unless an operation says otherwise.
    security: [{ ApiKey: [], AppId: [] }, { Bearer: [] }],
    paths: {
      '/items': { get: { operationId: 'listItems', responses: ok } },
      '/single': { get: { operationId: 'single', security: [{ ApiKey: [] }], responses: ok } },
      '/triple': { get: { operationId: 'triple', security: [{ ApiKey: [], AppId: [], Token: [] }], responses: ok } },
      '/digest': { get: { operationId: 'digest', security: [{ ApiKey: [], Digest: [] }], responses: ok } },
    },
  });

  beforeAll(async () => {
    app = await TestApp.start();
    upstream = await Upstream.start();
    folder = mkdtempSync(join(tmpdir(), 'patchbay-security-'));
    const file = join(folder, 'combo.json');
    writeFileSync(file, JSON.stringify(document(upstream.url)));
    const report = await app.app.get(OpenApiImportService).importSources([file], { secrets: {} });
    expect(report.refused).toEqual([]);
    // Project A: API key accounts; project B: bearer tokens.
    await app.ctx.newProject('api key project');
    expect((await app.post('/v1/app-configurations', { app_name: 'COMBO', security_scheme: 'api_key' })).status).toBe(
      200,
    );
    const linked = await app.post('/v1/linked-accounts/api-key', {
      app_name: 'COMBO',
      linked_account_owner_id: 'ann',
      api_key: 'key-of-ann',
    });
    expect(linked.status).toBe(200);
    bearerKey = (await app.ctx.newProject('bearer project')).apiKey;
    const options = { apiKey: bearerKey };
    expect(
      (await app.post('/v1/app-configurations', { app_name: 'COMBO', security_scheme: 'http_bearer' }, options)).status,
    ).toBe(200);
    expect(
      (
        await app.post(
          '/v1/linked-accounts/http-bearer',
          { app_name: 'COMBO', linked_account_owner_id: 'bob', token: 'token-of-bob' },
          options,
        )
      ).status,
    ).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await upstream?.close();
    await app?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  const execute = (name: string, owner = 'ann', apiKey?: string) =>
    app.post(
      `/v1/functions/COMBO__${name}/execute`,
      { function_input: {}, linked_account_owner_id: owner },
      { apiKey },
    );

  it('imports each combination with its function, and the app with one scheme of each kind', async () => {
    const rows: { name: string; security: unknown }[] = await app.dataSource.query(
      `SELECT name, protocol_data #> '{openapi,security}' AS security FROM functions WHERE app_name = 'COMBO'
        ORDER BY name COLLATE "C"`,
    );
    const apiKey = { scheme: 'ApiKey', in: 'header', name: 'X-Api-Key', kind: 'api_key' };
    const appId = { scheme: 'AppId', in: 'header', name: 'X-App-Id' };
    expect(rows).toEqual([
      { name: 'COMBO__DIGEST', security: [[apiKey, { scheme: 'Digest' }]] },
      { name: 'COMBO__LIST_ITEMS', security: [[apiKey, appId], [{ scheme: 'Bearer', kind: 'http_bearer' }]] },
      // A single scheme needs nothing beside the account's: nothing is stored.
      { name: 'COMBO__SINGLE', security: null },
      { name: 'COMBO__TRIPLE', security: [[apiKey, appId, { scheme: 'Token', in: 'query', name: 'token' }]] },
    ]);
    const schemes: string[] = (await app.get('/v1/apps/COMBO')).body.security_schemes;
    expect([...schemes].sort()).toEqual(['api_key', 'http_bearer']);
    // The same document again: the same records.
    const again = await app.app.get(OpenApiImportService).importSources([join(folder, 'combo.json')], { secrets: {} });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: 4 });
  });

  it('refuses a combination it cannot satisfy, naming what is missing, before anything is sent', async () => {
    const before = upstream.received.length;
    expect((await execute('LIST_ITEMS')).body).toEqual({
      success: false,
      data: null,
      error:
        "COMBO__LIST_ITEMS needs more than the linked account's api_key credential, and the app configuration " +
        'gives too little: ApiKey + AppId lacks extra_credentials.AppId (sent as header X-App-Id). ' +
        "Set the missing values in the app configuration's extra_credentials.",
    });
    expect((await execute('DIGEST')).body.error).toContain(
      'ApiKey + Digest lacks scheme Digest (not an apiKey scheme, so Patchbay cannot send it beside another)',
    );
    expect(upstream.received.length).toBe(before);
  });

  it('checks extra_credentials against the schemes the functions combine, and never shows their values', async () => {
    const refused = await app.patch('/v1/app-configurations/COMBO', {
      extra_credentials: { Bearer: 'x', Nope: 'y', AppId: '', Token: 'a\nb' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toEqual([
      {
        loc: ['body', 'extra_credentials', 'Bearer'],
        type: 'value_error',
        msg: 'No function of app COMBO combines scheme Bearer with another; those it takes: ApiKey, AppId, Token',
      },
      {
        loc: ['body', 'extra_credentials', 'Nope'],
        type: 'value_error',
        msg: 'No function of app COMBO combines scheme Nope with another; those it takes: ApiKey, AppId, Token',
      },
      {
        loc: ['body', 'extra_credentials', 'AppId'],
        type: 'string_type',
        msg: 'Input should be a string of 1 to 4096 characters',
      },
      {
        loc: ['body', 'extra_credentials', 'Token'],
        type: 'value_error',
        msg: 'Input should have no control characters',
      },
    ]);
    const set = await app.patch('/v1/app-configurations/COMBO', {
      extra_credentials: { AppId: 'app-id-7', Token: 'query-token-9' },
    });
    expect(set.status).toBe(200);
    expect(set.body.extra_credentials).toEqual({ AppId: '****', Token: '****' });
    expect(set.text).not.toContain('app-id-7');
    expect((await app.get('/v1/app-configurations/COMBO')).body.extra_credentials).toEqual({
      AppId: '****',
      Token: '****',
    });
  });

  it('sends the account’s key with the configuration’s extra credentials, each where its scheme says', async () => {
    expect((await execute('LIST_ITEMS')).body.success).toBe(true);
    expect(upstream.last.headers['x-api-key']).toBe('key-of-ann');
    expect(upstream.last.headers['x-app-id']).toBe('app-id-7');
    expect(upstream.last.headers.authorization).toBeUndefined();
    expect(upstream.last.url).toBe('/items');

    expect((await execute('TRIPLE')).body.success).toBe(true);
    expect(upstream.last.url).toBe('/triple?token=query-token-9');
    expect(upstream.last.headers['x-api-key']).toBe('key-of-ann');
    expect(upstream.last.headers['x-app-id']).toBe('app-id-7');

    // A single-scheme requirement takes the account's key alone.
    expect((await execute('SINGLE')).body.success).toBe(true);
    expect(upstream.last.headers['x-api-key']).toBe('key-of-ann');
    expect(upstream.last.headers['x-app-id']).toBeUndefined();
  });

  it('a bearer account picks the Bearer alternative, without the API key pair', async () => {
    expect((await execute('LIST_ITEMS', 'bob', bearerKey)).body.success).toBe(true);
    expect(upstream.last.headers.authorization).toBe('Bearer token-of-bob');
    expect(upstream.last.headers['x-api-key']).toBeUndefined();
    expect(upstream.last.headers['x-app-id']).toBeUndefined();
  });

  it('an extra credential never appears in an error, and `{}` removes them all', async () => {
    upstream.respond((request, response) => {
      response.writeHead(401, { 'content-type': 'text/plain' });
      response.end(`bad app id ${String(request.headers['x-app-id'])}`);
    });
    const failed = await execute('LIST_ITEMS');
    expect(failed.body.error).toBe('Upstream answered HTTP 401: bad app id [redacted]');
    upstream.reset();
    const cleared = await app.patch('/v1/app-configurations/COMBO', { extra_credentials: {} });
    expect(cleared.body.extra_credentials).toEqual({});
    expect((await execute('LIST_ITEMS')).body.error).toContain('lacks extra_credentials.AppId');
  });
});
