import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../libs/common/src/index.js';
import { AppEntity } from '../../src/apps/app.entity.js';
import { CatalogService } from '../../src/catalog/catalog.service.js';
import { FunctionEntity } from '../../src/functions/function.entity.js';
import { HIDDEN_WITHOUT_DEFAULT_PATHS, hiddenDefaultsParameters } from '../fixtures/schemas/hidden-defaults.js';
import { ACI_CATALOG as ACI, ACI_PRESENT, needsAci } from '../helpers/shared-data.js';
import { TestApp } from '../helpers/test-app.js';

const FIXTURES = 'test/fixtures/catalog';

describe('catalogue import', () => {
  let app: TestApp;
  let catalog: CatalogService;
  let work: string;

  beforeAll(async () => {
    app = await TestApp.start();
    catalog = app.app.get(CatalogService);
    work = mkdtempSync(join(tmpdir(), 'patchbay-catalog-'));
  });

  afterAll(async () => {
    rmSync(work, { recursive: true, force: true });
    await app.close();
  });

  it.skipIf(!ACI_PRESENT)(
    needsAci('imports the 98 ACI apps and 987 functions, then finds them unchanged'),
    async () => {
      const report = await catalog.importPaths([ACI], { secrets: {} });
      expect(report.problems).toEqual([]);
      expect(report.apps.added).toHaveLength(98);
      expect(report.functions.added).toHaveLength(987);
      expect(await app.dataSource.getRepository(FunctionEntity).count()).toBe(987);

      const again = await catalog.importPaths([ACI], { secrets: {} });
      expect(again.apps).toEqual({ added: [], updated: [], unchanged: 98 });
      expect(again.functions).toEqual({ added: [], updated: [], unchanged: 987 });
    },
  );

  it('imports the test catalogue, then finds it unchanged', async () => {
    const report = await catalog.importPaths([`${FIXTURES}/valid`], { secrets: {} });
    expect(report.problems).toEqual([]);
    expect(report.apps.added.sort()).toEqual(['OAUTH_DEMO', 'WEATHER_DEMO']);
    const again = await catalog.importPaths([`${FIXTURES}/valid`], { secrets: {} });
    expect(again.apps).toEqual({ added: [], updated: [], unchanged: 2 });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: report.functions.added.length });
  });

  it('leaves planner statistics of the catalogue and the search index (the embedded database has no autovacuum)', async () => {
    const copy = join(work, 'weather_demo_statistics');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    await catalog.importPaths([copy], { secrets: {} });
    const analysed: { tablename: string }[] = await app.dataSource.query(
      `SELECT DISTINCT tablename FROM pg_stats
        WHERE schemaname = 'public' AND attname = 'name' AND tablename IN ('apps', 'functions', 'search_documents')
        ORDER BY tablename`,
    );
    expect(analysed.map((row) => row.tablename)).toEqual(['apps', 'functions', 'search_documents']);
  });

  it('finds a catalogue whose files only reorder keys unchanged', async () => {
    const copy = join(work, 'weather_demo_reordered');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    const first = await catalog.importPaths([copy], { secrets: {} });
    const reverse = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reverse)
        : value && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value)
                .reverse()
                .map(([key, child]) => [key, reverse(child)]),
            )
          : value;
    for (const file of ['app.json', 'functions.json']) {
      const text = readFileSync(join(copy, file), 'utf8');
      const reordered = JSON.stringify(reverse(JSON.parse(text)), null, 4);
      expect(reordered).not.toBe(text);
      writeFileSync(join(copy, file), reordered);
    }
    const again = await catalog.importPaths([copy], { secrets: {} });
    expect(again.apps).toEqual({ added: [], updated: [], unchanged: 1 });
    expect(again.functions).toEqual({
      added: [],
      updated: [],
      unchanged: first.functions.added.length + first.functions.updated.length + first.functions.unchanged,
    });
  });

  it('reports a changed function as updated and a new one as added', async () => {
    const copy = join(work, 'weather_demo');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    await catalog.importPaths([copy], { secrets: {} });
    const functions = JSON.parse(readFileSync(join(copy, 'functions.json'), 'utf8'));
    functions[0].description = 'Get the daily weather forecast for coordinates';
    functions.push({ ...functions[1], name: 'WEATHER_DEMO__GET_RADAR', description: 'Get the radar image' });
    writeFileSync(join(copy, 'functions.json'), JSON.stringify(functions));
    const report = await catalog.importPaths([copy], { secrets: {} });
    expect(report.apps.unchanged).toBe(1);
    expect(report.functions.updated).toEqual(['WEATHER_DEMO__GET_FORECAST']);
    expect(report.functions.added).toEqual(['WEATHER_DEMO__GET_RADAR']);
    const stored = await app.dataSource.getRepository(FunctionEntity).findOneByOrFail({
      name: 'WEATHER_DEMO__GET_FORECAST',
    });
    expect(stored.description).toBe('Get the daily weather forecast for coordinates');
  });

  it('stores every column as the file gives it, text past ASCII included', async () => {
    const copy = join(work, 'unicode_demo');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    const appFile = JSON.parse(readFileSync(join(copy, 'app.json'), 'utf8'));
    appFile.name = 'UNICODE_DEMO';
    writeFileSync(join(copy, 'app.json'), JSON.stringify(appFile));
    const functions = JSON.parse(
      readFileSync(join(copy, 'functions.json'), 'utf8').replaceAll('WEATHER_DEMO', 'UNICODE_DEMO'),
    );
    functions[0].description = 'Prévision météo ☀ für „Köln“ 😀, line\u2028separator, quote " and \\ backslash';
    functions[0].tags = ['météo', '天気'];
    functions[0].parameters.properties.query = {
      type: 'object',
      properties: { città: { type: 'string', description: 'Nom de la ville — « Zürich »', default: 'Genève' } },
    };
    writeFileSync(join(copy, 'functions.json'), JSON.stringify(functions));

    const report = await catalog.importPaths([copy], { secrets: {} });
    expect(report.problems).toEqual([]);
    for (const fn of functions) {
      const stored = await app.dataSource.getRepository(FunctionEntity).findOneByOrFail({ name: fn.name });
      expect(stored).toMatchObject({
        app_name: 'UNICODE_DEMO',
        description: fn.description,
        tags: fn.tags,
        visibility: fn.visibility,
        active: fn.active,
        protocol: fn.protocol,
        protocol_data: fn.protocol_data,
        parameters: fn.parameters,
        response: fn.response ?? {},
      });
    }
    const again = await catalog.importPaths([copy], { secrets: {} });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: functions.length });
  });

  it('seals the OAuth 2.0 client secret and keeps it out of the plain columns', async () => {
    await catalog.importPaths([`${FIXTURES}/valid/oauth_demo`], {
      secrets: { OAUTH_DEMO_CLIENT_ID: 'client-1', OAUTH_DEMO_CLIENT_SECRET: 'very-secret-value' },
    });
    const row = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'OAUTH_DEMO' });
    expect(row.security_schemes.oauth2).toMatchObject({ client_id: 'client-1' });
    expect(JSON.stringify(row.security_schemes)).not.toContain('very-secret-value');
    expect(row.secrets).not.toContain('very-secret-value');
    expect(app.app.get(SecretBox).openJson(row.secrets as string)).toEqual({
      oauth2_client_secret: 'very-secret-value',
    });
  });

  it('leaves an unfilled placeholder unset and reports it', async () => {
    const report = await catalog.importPaths([`${FIXTURES}/valid/oauth_demo`], { secrets: {} });
    expect(report.unfilled_placeholders).toEqual([
      { app: 'OAUTH_DEMO', path: '/security_schemes/oauth2/client_id', placeholder: 'OAUTH_DEMO_CLIENT_ID' },
      { app: 'OAUTH_DEMO', path: '/security_schemes/oauth2/client_secret', placeholder: 'OAUTH_DEMO_CLIENT_SECRET' },
    ]);
    const row = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'OAUTH_DEMO' });
    expect(row.security_schemes.oauth2?.client_id).toBeNull();
    expect(row.secrets).toBeNull();
  });

  it('refuses parameter schemas that break the catalogue rules, writing nothing', async () => {
    const copy = join(work, 'broken');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    const appFile = JSON.parse(readFileSync(join(copy, 'app.json'), 'utf8'));
    appFile.name = 'BROKEN_DEMO';
    writeFileSync(join(copy, 'app.json'), JSON.stringify(appFile));
    const functions = JSON.parse(
      readFileSync(join(copy, 'functions.json'), 'utf8').replaceAll('WEATHER_DEMO', 'BROKEN_DEMO'),
    );
    delete functions[0].parameters.properties.query.properties.units.default;
    functions[1].parameters.properties.path.visible = ['region', 'zone'];
    functions[1].parameters.properties.extra = { type: 'object', properties: {} };
    writeFileSync(join(copy, 'functions.json'), JSON.stringify(functions));

    const report = await catalog.importPaths([copy], { secrets: {} });
    expect(report.imported).toBe(false);
    expect(report.problems).toEqual(
      expect.arrayContaining([
        {
          file: join(copy, 'functions.json'),
          path: '/0/parameters/properties/query/properties/units',
          reason: 'is required but not visible, so it needs a default',
        },
        {
          file: join(copy, 'functions.json'),
          path: '/1/parameters/properties/path/visible/1',
          reason: '"zone" is not a property',
        },
        {
          file: join(copy, 'functions.json'),
          path: '/1/parameters/properties/extra',
          reason: 'a REST function has only path, query, header, cookie and body parameters',
        },
      ]),
    );
    expect(await app.dataSource.getRepository(AppEntity).existsBy({ name: 'BROKEN_DEMO' })).toBe(false);
  });

  it('checks hidden required properties in oneOf/anyOf/allOf branches and additionalProperties', async () => {
    const copy = join(work, 'nested_hidden');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    const appFile = JSON.parse(readFileSync(join(copy, 'app.json'), 'utf8'));
    appFile.name = 'NESTED_HIDDEN';
    writeFileSync(join(copy, 'app.json'), JSON.stringify(appFile));
    const functions = JSON.parse(
      readFileSync(join(copy, 'functions.json'), 'utf8').replaceAll('WEATHER_DEMO', 'NESTED_HIDDEN'),
    ).slice(0, 1);
    functions[0].parameters = hiddenDefaultsParameters({ withoutDefaults: true });
    writeFileSync(join(copy, 'functions.json'), JSON.stringify(functions));

    const refused = await catalog.importPaths([copy], { secrets: {} });
    expect(refused.imported).toBe(false);
    expect(refused.problems).toEqual(
      HIDDEN_WITHOUT_DEFAULT_PATHS.map((path) => ({
        file: join(copy, 'functions.json'),
        path: `/0${path}`,
        reason: 'is required but not visible, so it needs a default',
      })),
    );

    functions[0].parameters = hiddenDefaultsParameters();
    writeFileSync(join(copy, 'functions.json'), JSON.stringify(functions));
    const accepted = await catalog.importPaths([copy], { secrets: {} });
    expect(accepted.problems).toEqual([]);
    expect(accepted.functions.added).toEqual(['NESTED_HIDDEN__GET_FORECAST']);
  });

  it('refuses parameters that are not valid JSON Schema: a wrong type, a pattern that is no regular expression, a dangling $ref', async () => {
    const copy = join(work, 'invalid_schema');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    const appFile = JSON.parse(readFileSync(join(copy, 'app.json'), 'utf8'));
    appFile.name = 'INVALID_SCHEMA';
    writeFileSync(join(copy, 'app.json'), JSON.stringify(appFile));
    const template = JSON.parse(
      readFileSync(join(copy, 'functions.json'), 'utf8').replaceAll('WEATHER_DEMO', 'INVALID_SCHEMA'),
    )[0];
    const broken = [
      { type: 'object', properties: { query: { type: 'sometimes' } } },
      { type: 'object', properties: { query: { type: 'string', pattern: '([a-z' } } },
      { type: 'object', properties: { query: { $ref: '#/definitions/missing' } } },
      // Deeper, in the places the validator applies patterns: a list's items, a branch, a map's keys.
      { type: 'object', properties: { query: { type: 'array', items: { anyOf: [{ pattern: '\\p{Nope}' }] } } } },
      { type: 'object', properties: { body: { type: 'object', patternProperties: { '^x-(': { type: 'string' } } } } },
    ];
    // What only looks like a pattern is not one: a property named "pattern", data in a default.
    const fine = [
      {
        type: 'object',
        properties: {
          query: {
            type: 'object',
            properties: { pattern: { type: 'string', default: '([a-z' } },
            default: { pattern: '([a-z' },
          },
        },
      },
    ];
    const functions = [...broken, ...fine].map((parameters, i) => ({
      ...template,
      name: `INVALID_SCHEMA__F${i}`,
      parameters,
    }));
    writeFileSync(join(copy, 'functions.json'), JSON.stringify(functions));

    const report = await catalog.importPaths([copy], { secrets: {} });
    expect(report.imported).toBe(false);
    expect(report.problems.map((problem) => problem.path)).toEqual(broken.map((_, i) => `/${i}/parameters`));
    for (const problem of report.problems) {
      expect(problem.reason).toMatch(/^is not a valid JSON Schema: /);
    }
    expect(report.problems[0].reason).toContain('/properties/query/type');
    expect(report.problems[1].reason).toContain('Invalid regular expression: /([a-z/u');
    expect(report.problems[2].reason).toContain('#/definitions/missing');
    expect(report.problems[3].reason).toContain('Invalid regular expression: /\\p{Nope}/u');
    expect(report.problems[4].reason).toContain('Invalid regular expression: /^x-(/u');
    expect(await app.dataSource.getRepository(AppEntity).existsBy({ name: 'INVALID_SCHEMA' })).toBe(false);
  });

  it('reports malformed JSON with the file', async () => {
    const copy = join(work, 'malformed');
    cpSync(`${FIXTURES}/valid/weather_demo`, copy, { recursive: true });
    writeFileSync(join(copy, 'functions.json'), '[{"name": ');
    const report = await catalog.importPaths([copy], { secrets: {} });
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0].file).toBe(join(copy, 'functions.json'));
    expect(report.problems[0].reason).toMatch(/^is not valid JSON/);
  });

  it('reports a path that is not a folder', async () => {
    const report = await catalog.importPaths([join(work, 'nope')], { secrets: {} });
    expect(report.problems).toEqual([
      { file: join(work, 'nope'), path: '', reason: `${join(work, 'nope')} is not a folder` },
    ]);
  });
});
