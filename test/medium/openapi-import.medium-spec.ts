import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppEntity } from '../../src/apps/app.entity.js';
import { OpenApiImportService } from '../../src/catalog/openapi/openapi-import.service.js';
import { EMBEDDED_DATABASE } from '../../src/database/database.module.js';
import type { EmbeddedDatabase } from '../../src/database/embedded-database.js';
import { FunctionEntity } from '../../src/functions/function.entity.js';
import { TestApp } from '../helpers/test-app.js';

const NOTES = 'test/fixtures/openapi/notes-3.1.json';

/** An OpenAPI 3.0 document of `operations` POST operations whose bodies have `properties` described properties. */
function generatedDocument(title: string, operations: number, properties: number, enumValue = 'plain'): object {
  const paths: Record<string, object> = {};
  for (let op = 0; op < operations; op += 1) {
    const props: Record<string, object> = {};
    for (let p = 0; p < properties; p += 1) {
      props[`field${p}`] = {
        type: 'string',
        description: `Field ${p} of operation ${op}: ${'a long explanation of what this field holds '.repeat(8)}`,
      };
    }
    props.mode = { type: 'string', enum: [enumValue, 'other'] };
    paths[`/things${op}`] = {
      post: {
        operationId: `createThing${op}`,
        summary: `Creates thing ${op}`,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: props } } },
        },
        responses: { '200': { description: 'ok' } },
      },
    };
  }
  return { openapi: '3.0.3', info: { title, version: '1' }, servers: [{ url: 'https://things.example.com' }], paths };
}

// Each test imports thousands of functions (10–18 s on the 2-core machine under the load of a CI run, up to 30 s
// and more beside other work): what they check is what is written, so they get time enough not to fail on load.
describe('import-openapi writes', { timeout: 120_000 }, () => {
  let app: TestApp;
  let importer: OpenApiImportService;
  let work: string;

  beforeAll(async () => {
    app = await TestApp.start();
    importer = app.app.get(OpenApiImportService);
    work = mkdtempSync(join(tmpdir(), 'patchbay-openapi-writes-'));
  });

  afterAll(async () => {
    rmSync(work, { recursive: true, force: true });
    await app.close();
  });

  it('writes a large document (about 10 MB of records, several statements) with every function whole', async () => {
    // 400 functions of about 30 KB of parameters each: some 12 MB, once a single 200-row statement each half.
    const file = join(work, 'large.json');
    writeFileSync(file, JSON.stringify(generatedDocument('Large Things', 400, 60)));
    const report = await importer.importSources([file], { secrets: {} });
    expect(report.refused).toEqual([]);
    expect(report.functions.added).toHaveLength(400);

    const rows = await app.dataSource
      .getRepository(FunctionEntity)
      .find({ where: { app_name: 'LARGE_THINGS' }, order: { name: 'ASC' } });
    expect(rows).toHaveLength(400);
    const sample = rows.find((row) => row.name === 'LARGE_THINGS__CREATE_THING399') as FunctionEntity;
    const body = (sample.parameters as { properties: { body: { properties: Record<string, unknown> } } }).properties
      .body;
    expect(Object.keys(body.properties)).toHaveLength(61);
    expect(JSON.stringify(sample.parameters).length).toBeGreaterThan(20_000);

    const again = await importer.importSources([file], { secrets: {} });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: 400 });
  });

  it('writes a document of several batches whole, reports it unchanged again, and leaves nothing of one refused in its last batch', async () => {
    // 2,500 functions: three batches from the reader (1,000 functions at most each), thirteen statements.
    const file = join(work, 'many.json');
    writeFileSync(file, JSON.stringify(generatedDocument('Many Things', 2500, 1)));
    const report = await importer.importSources([file], { secrets: {} });
    expect(report.refused).toEqual([]);
    expect(report.documents.map((doc) => [doc.app, doc.functions])).toEqual([['MANY_THINGS', 2500]]);
    expect(report.functions.added).toHaveLength(2500);
    expect(new Set(report.functions.added).size).toBe(2500);
    expect(await app.dataSource.getRepository(FunctionEntity).countBy({ app_name: 'MANY_THINGS' })).toBe(2500);

    const again = await importer.importSources([file], { secrets: {} });
    expect(again.apps).toEqual({ added: [], updated: [], unchanged: 1 });
    expect(again.functions).toEqual({ added: [], updated: [], unchanged: 2500 });

    // The operation sorted last (/things999) holds a value jsonb cannot store: the first two batches
    // are written before the database refuses the third, and the whole document is rolled back.
    const document = generatedDocument('Late Failure', 2500, 1) as { paths: Record<string, object> };
    document.paths['/things999'] = (generatedDocument('x', 1000, 1, 'bad\u0000value') as typeof document).paths[
      '/things999'
    ];
    const late = join(work, 'late.json');
    writeFileSync(late, JSON.stringify(document));
    const after = join(work, 'after.json');
    writeFileSync(after, JSON.stringify(generatedDocument('After Things', 3, 1)));
    const refused = await importer.importSources([late, after], { secrets: {} });
    expect(refused.refused).toHaveLength(1);
    expect(refused.refused[0].file).toBe(late);
    expect(refused.refused[0].reason).toMatch(/^the database refused its records: .*\(SQLSTATE 22P05\)$/);
    expect(refused.apps.added).toEqual(['AFTER_THINGS']);
    expect(refused.functions.added).toHaveLength(3);
    expect(await app.dataSource.getRepository(FunctionEntity).countBy({ app_name: 'LATE_FAILURE' })).toBe(0);
    expect(await app.dataSource.getRepository(AppEntity).countBy({ name: 'LATE_FAILURE' })).toBe(0);
    expect(await app.dataSource.getRepository(FunctionEntity).countBy({ app_name: 'AFTER_THINGS' })).toBe(3);
  });

  it('indexes for search every function of a document whose schemas take several pages to read back', async () => {
    // Enum values of random text, so that the stored (compressed) schemas pass the 4 MB a page reads.
    const document = generatedDocument('Random Things', 300, 60) as { paths: Record<string, Record<string, any>> };
    for (const path of Object.values(document.paths)) {
      const properties = path.post.requestBody.content['application/json'].schema.properties;
      for (const property of Object.values<Record<string, unknown>>(properties)) {
        property.enum = Array.from({ length: 20 }, () => randomBytes(18).toString('base64'));
      }
    }
    const file = join(work, 'random.json');
    writeFileSync(file, JSON.stringify(document));
    const report = await importer.importSources([file], { secrets: {} });
    expect(report.functions.added).toHaveLength(300);

    const [{ stored }] = await app.dataSource.query(
      `SELECT sum(pg_column_size(parameters))::bigint AS stored FROM functions WHERE app_name = 'RANDOM_THINGS'`,
    );
    expect(Number(stored)).toBeGreaterThan(2 * 4 * 1024 * 1024);
    const documents: { name: string; params: string }[] = await app.dataSource.query(
      `SELECT name, fields->>'params' AS params FROM search_documents WHERE kind = 'function' AND app_name = 'RANDOM_THINGS'`,
    );
    expect(documents).toHaveLength(300);
    for (const { params } of documents) {
      expect(params.split(' ')).toEqual(expect.arrayContaining(['field0', 'field59', 'mode']));
    }
  });

  it('refuses a document whose records the database cannot store, with its reason, and imports the others', async () => {
    // PostgreSQL's jsonb cannot hold the character U+0000; nothing before the database rejects it.
    const bad = join(work, 'a-nul.json');
    writeFileSync(bad, JSON.stringify(generatedDocument('Nul Things', 3, 2, 'bad\u0000value')));
    const good = join(work, 'b-good.json');
    writeFileSync(good, JSON.stringify(generatedDocument('Good Things', 3, 2)));
    const report = await importer.importSources([bad, good, NOTES], { secrets: {} });

    expect(report.refused).toHaveLength(1);
    expect(report.refused[0].file).toBe(bad);
    expect(report.refused[0].reason).toMatch(/^the database refused its records: .*\(SQLSTATE 22P05\)$/);
    expect(report.documents.map((doc) => doc.app)).toEqual(['GOOD_THINGS', 'NOTES']);
    expect(report.apps.added).toEqual(['GOOD_THINGS', 'NOTES']);
    // Nothing of the refused document was left behind: its transaction was rolled back.
    expect(await app.dataSource.getRepository(FunctionEntity).countBy({ app_name: 'NUL_THINGS' })).toBe(0);
    expect(await app.dataSource.getRepository(FunctionEntity).countBy({ app_name: 'GOOD_THINGS' })).toBe(3);
  });
});

describe('import-openapi when the database fails', () => {
  it('ends the import with the database error instead of refusing every document', async () => {
    const app = await TestApp.start();
    const work = mkdtempSync(join(tmpdir(), 'patchbay-openapi-down-'));
    const embedded = app.app.get<EmbeddedDatabase | null>(EMBEDDED_DATABASE);
    let admin: DataSource | undefined;
    let database = '';
    try {
      const files = ['one', 'two'].map((name) => {
        const file = join(work, `${name}.json`);
        writeFileSync(file, JSON.stringify(generatedDocument(`Down ${name}`, 2, 2)));
        return file;
      });
      if (embedded) {
        // The embedded database's thread stops: every connection to it is gone.
        await embedded.close();
      } else {
        const url = (app.dataSource.options as { url: string }).url;
        database = new URL(url).pathname.slice(1);
        admin = new DataSource({ type: 'postgres', url: url.replace(/\/[^/?]+(\?|$)/, '/postgres$1') });
        await admin.initialize();
        await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS false`);
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [database]);
      }
      const importer = app.app.get(OpenApiImportService);
      await expect(importer.importSources(files, { secrets: {} })).rejects.toThrow();
    } finally {
      if (admin) {
        await admin.query(`ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS true`);
        await admin.destroy();
      }
      rmSync(work, { recursive: true, force: true });
      await app.close();
    }
  });
});
