import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stableJson } from '../../libs/common/src/index.js';
import { checkAppRecords, type FunctionRecord } from '../../src/catalog/catalog-files.js';
import { mapOpenApiDocument, OpenApiRefusal } from '../../src/catalog/openapi/openapi-mapping.js';
import { OpenApiReader } from '../../src/catalog/openapi/openapi-reader.js';
import { loadOpenApiDocument } from '../../src/catalog/openapi/openapi-source.js';

const FIXTURES = 'test/fixtures/openapi';
const DOCUMENTS = ['petstore-3.0.yaml', 'notes-3.1.json', 'todo-swagger-2.0.json'].map((f) => `${FIXTURES}/${f}`);

/** The records of `file` read and mapped on this thread, as the import did before it had a reader thread. */
async function inProcess(file: string): Promise<string> {
  const { document } = await loadOpenApiDocument(file);
  const mapping = mapOpenApiDocument(document, {});
  const checked = checkAppRecords(
    mapping.app,
    mapping.functions,
    { folder: file, appFile: 'a', functionsFile: 'f' },
    {},
  );
  return stableJson({ app: checked.loaded?.app, functions: checked.loaded?.functions, skipped: mapping.skipped }) ?? '';
}

describe('OpenAPI reader thread', { timeout: 120_000 }, () => {
  let work: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'patchbay-openapi-reader-'));
  });

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('gives the records reading on this thread gives, byte for byte, with or without fresh threads', async () => {
    const kept = new OpenApiReader({ recycleHeapMb: 100_000, maxHeapMb: 1024 });
    const renewed = new OpenApiReader({ recycleHeapMb: 0, maxHeapMb: 1024 });
    try {
      for (const file of DOCUMENTS) {
        const expected = await inProcess(file);
        for (const reader of [kept, renewed]) {
          const name = await reader.load(file, true);
          const mapped = await reader.map(name, new Map(), {}, {});
          const functions = [];
          for await (const batch of reader.functions()) {
            functions.push(...batch);
          }
          expect(functions).toHaveLength(mapped.functions);
          expect(stableJson({ app: mapped.loaded.app, functions, skipped: mapped.skipped })).toBe(expected);
          for (const fn of functions) {
            expect(fn.hash).toMatch(/^[0-9a-f]{64}$/);
            expect(JSON.parse(fn.row)).toMatchObject({ name: fn.name, content_hash: fn.hash });
          }
        }
      }
      expect(kept.threads).toBe(1);
      // Over its heap limit after every document: a fresh thread each time.
      expect(renewed.threads).toBe(DOCUMENTS.length);
    } finally {
      await kept.close();
      await renewed.close();
    }
  });

  it("hands a large document's records over in batches of at most 1,000, in order, each row whole", async () => {
    const many = join(work, 'many.json');
    const paths: Record<string, object> = {};
    for (let op = 0; op < 2500; op += 1) {
      paths[`/p${op}`] = {
        get: { summary: `Gets ${'é'.repeat(op % 7)} ${op}`, responses: { '200': { description: 'ok' } } },
      };
    }
    writeFileSync(
      many,
      JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'Many', version: '1' },
        servers: [{ url: 'https://x.example' }],
        paths,
      }),
    );
    const expected = await inProcess(many);
    const reader = new OpenApiReader({ recycleHeapMb: 100_000, maxHeapMb: 1024 });
    try {
      const mapped = await reader.map(await reader.load(many, true), new Map(), {}, {});
      const batches: FunctionRecord[][] = [];
      for await (const batch of reader.functions()) {
        batches.push(batch);
      }
      expect(batches.map((batch) => batch.length)).toEqual([1000, 1000, 500]);
      const functions = batches.flat();
      expect(stableJson({ app: mapped.loaded.app, functions, skipped: mapped.skipped })).toBe(expected);
      // The reader is free for the next document.
      expect(await reader.load(DOCUMENTS[0], true)).toBe('PET_STORE');
    } finally {
      await reader.close();
    }
  });

  it('refuses a document that needs more memory than the thread may take, then reads the next one', async () => {
    const big = join(work, 'big.json');
    const paths: Record<string, object> = {};
    for (let op = 0; op < 3000; op += 1) {
      const properties = Object.fromEntries(
        Array.from({ length: 40 }, (_, p) => [
          `f${p}`,
          { type: 'string', description: `field ${p} ${'x'.repeat(200)}` },
        ]),
      );
      paths[`/p${op}`] = {
        post: {
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties } } } },
          responses: { '200': { description: 'ok' } },
        },
      };
    }
    writeFileSync(
      big,
      JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'Big', version: '1' },
        servers: [{ url: 'https://x.example' }],
        paths,
      }),
    );
    const reader = new OpenApiReader({ recycleHeapMb: 100_000, maxHeapMb: 64 });
    try {
      const refusal = await reader
        .load(big, true)
        .then((name) => reader.map(name, new Map(), {}, {}))
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(OpenApiRefusal);
      expect((refusal as Error).message).toBe('needs more than 64 MB of memory to read');
      const name = await reader.load(DOCUMENTS[0], true);
      expect((await reader.map(name, new Map(), {}, {})).loaded.app.name).toBe('PET_STORE');
      expect(reader.threads).toBe(2);
    } finally {
      await reader.close();
    }
  });
});
