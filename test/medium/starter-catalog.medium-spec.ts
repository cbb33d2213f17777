import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppEntity } from '../../src/apps/app.entity.js';
import { CatalogService, type ImportReport } from '../../src/catalog/catalog.service.js';
import { starterCatalogPath } from '../../src/catalog/starter-catalog.js';
import { FunctionEntity } from '../../src/functions/function.entity.js';
import { TestApp } from '../helpers/test-app.js';

const ALL_SCHEMES = ['no_auth', 'api_key', 'http_basic', 'http_bearer', 'oauth2'];

/** The OAuth 2.0 client credentials the starter catalogue leaves to the operator. */
const OAUTH_PLACEHOLDERS = [
  { app: 'GITHUB', path: '/security_schemes/oauth2/client_id', placeholder: 'PATCHBAY_GITHUB_CLIENT_ID' },
  { app: 'GITHUB', path: '/security_schemes/oauth2/client_secret', placeholder: 'PATCHBAY_GITHUB_CLIENT_SECRET' },
  { app: 'GOOGLE_CALENDAR', path: '/security_schemes/oauth2/client_id', placeholder: 'PATCHBAY_GOOGLE_CLIENT_ID' },
  {
    app: 'GOOGLE_CALENDAR',
    path: '/security_schemes/oauth2/client_secret',
    placeholder: 'PATCHBAY_GOOGLE_CLIENT_SECRET',
  },
];

describe('starter catalogue', () => {
  let app: TestApp;
  let first: ImportReport;

  const importStarter = (secrets: Record<string, string> = {}) =>
    app.app.get(CatalogService).importPaths([starterCatalogPath()], { secrets });

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
    first = await importStarter();
  });

  afterAll(() => app.close());

  it('imports with no problems', () => {
    expect(first.problems).toEqual([]);
    expect(first.imported).toBe(true);
    expect(first.apps.updated).toEqual([]);
    expect(first.functions.updated).toEqual([]);
  });

  it('holds at least 8 apps, each with 1 to 6 functions', async () => {
    expect(first.apps.added.length).toBeGreaterThanOrEqual(8);
    const functions = await app.dataSource
      .getRepository(FunctionEntity)
      .findBy(first.apps.added.map((name) => ({ app_name: name })));
    expect(functions).toHaveLength(first.functions.added.length);
    for (const name of first.apps.added) {
      const count = functions.filter((fn) => fn.app_name === name).length;
      expect(count, name).toBeGreaterThanOrEqual(1);
      expect(count, name).toBeLessThanOrEqual(6);
    }
  });

  it('covers every security scheme, and api_key both in a header and in the query', async () => {
    const apps = await app.dataSource.getRepository(AppEntity).findBy(first.apps.added.map((name) => ({ name })));
    const schemes = new Set(apps.flatMap((row) => Object.keys(row.security_schemes)));
    expect([...schemes].sort()).toEqual([...ALL_SCHEMES].sort());
    const apiKeyLocations = new Set(apps.map((row) => row.security_schemes.api_key?.location).filter(Boolean));
    expect(apiKeyLocations).toEqual(new Set(['header', 'query']));
  });

  it('reports the unfilled OAuth 2.0 client credentials and leaves them unset', async () => {
    expect(first.unfilled_placeholders).toEqual(expect.arrayContaining(OAUTH_PLACEHOLDERS));
    expect(first.unfilled_placeholders).toHaveLength(OAUTH_PLACEHOLDERS.length);
    const github = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'GITHUB' });
    expect(github.security_schemes.oauth2?.client_id).toBeNull();
    expect(github.secrets).toBeNull();
  });

  it('exposes the connector function with the interface its connector implements', async () => {
    const res = await app.get('/v1/functions/PATCHBAY_UTILS__FORMAT_DATETIME/definition', {
      query: { inference_provider: 'anthropic' },
    });

    expect(res.status).toBe(200);
    expect(res.body.input_schema).toMatchObject({
      type: 'object',
      properties: {
        timestamp: { type: 'string' },
        time_zone: { type: 'string' },
        locale: { type: 'string', default: 'en-US' },
      },
      required: ['timestamp', 'time_zone'],
      additionalProperties: false,
    });
    const stored = await app.dataSource
      .getRepository(FunctionEntity)
      .findOneByOrFail({ name: 'PATCHBAY_UTILS__FORMAT_DATETIME' });
    expect(stored.protocol).toBe('connector');
    expect(stored.protocol_data).toEqual({});
  });

  it('hides the fixed headers of a REST function from the LLM', async () => {
    const res = await app.get('/v1/functions/GITHUB__CREATE_ISSUE/definition');

    expect(res.status).toBe(200);
    const parameters = res.body.function.parameters;
    expect(Object.keys(parameters.properties).sort()).toEqual(['body', 'path']);
    expect(parameters.properties.body.required).toEqual(['title']);
  });

  it('reports everything unchanged on a re-import', async () => {
    const again = await importStarter();

    expect(again.problems).toEqual([]);
    expect(again.apps).toEqual({ added: [], updated: [], unchanged: first.apps.added.length });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: first.functions.added.length });
  });

  it('takes the OAuth 2.0 client credentials from the secrets when given', async () => {
    const report = await importStarter({
      PATCHBAY_GITHUB_CLIENT_ID: 'gh-client',
      PATCHBAY_GITHUB_CLIENT_SECRET: 'gh-secret',
      PATCHBAY_GOOGLE_CLIENT_ID: 'google-client',
      PATCHBAY_GOOGLE_CLIENT_SECRET: 'google-secret',
    });

    expect(report.problems).toEqual([]);
    expect(report.unfilled_placeholders).toEqual([]);
    expect(report.apps.updated.sort()).toEqual(['GITHUB', 'GOOGLE_CALENDAR']);
    expect(report.functions.updated).toEqual([]);
    const github = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'GITHUB' });
    expect(github.security_schemes.oauth2?.client_id).toBe('gh-client');
    expect(github.secrets).not.toBeNull();
    expect(github.secrets).not.toContain('gh-secret');
  });
});
