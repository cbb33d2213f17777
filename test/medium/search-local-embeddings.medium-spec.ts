import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApiApp } from '../../src/api-app.js';
import { InvalidConfigError, loadConfig } from '../../src/config/app-config.js';
import { EmbeddedDatabase } from '../../src/database/embedded-database.js';
import { createEmbeddingProvider } from '../../src/search/embeddings/embedding-provider.factory.js';
import {
  assertPackageInstalled,
  TRANSFORMERS_PACKAGE,
  LocalEmbeddingProvider,
} from '../../src/search/embeddings/local-embedding.provider.js';
import { withDatabase } from '../helpers/database-url.js';
import { TestContext } from '../helpers/test-context.js';
import { writeTinyModel } from '../helpers/tiny-onnx-model.js';

/** Model A relates "stripes" to zebras. */
const CONCEPTS_A = [
  ['zebra', 'stripes', 'striped'],
  ['invoice', 'bill', 'billing'],
  ['weather', 'rain', 'umbrella'],
];
/** Model B, of another size, relates "stripes" to billing instead. */
const CONCEPTS_B = [['invoice', 'bill', 'stripes'], ['zebra'], ['weather', 'rain'], ['umbrella'], ['sheep']];

/**
 * A database that outlives one start of the service (TestApp's lives and dies with its app), so that
 * a restart finds what the previous start stored: a data directory seeded from the migrated
 * template, or a database created from the template on the PostgreSQL server.
 */
class PersistentDatabase {
  private constructor(
    readonly env: Record<string, string>,
    readonly drop: () => Promise<void>,
  ) {}

  static async create(root: string): Promise<PersistentDatabase> {
    const template = inject('databaseTemplate');
    if (template.kind === 'embedded') {
      const dataDir = join(root, 'data');
      const seed = await EmbeddedDatabase.open({
        dataDir,
        loadDataDir: new Blob([readFileSync(template.dumpPath)]),
        maxConnections: 1,
        holder: 'test seed',
      });
      await seed.close();
      return new PersistentDatabase({ DATA_DIR: dataDir }, () => Promise.resolve());
    }
    const name = `patchbay_t_${randomBytes(6).toString('hex')}`;
    const admin = new DataSource({ type: 'postgres', url: template.url });
    await admin.initialize();
    await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template.template}"`);
    return new PersistentDatabase({ DATABASE_URL: withDatabase(template.url, name) }, async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
    });
  }
}

interface Started {
  app: NestFastifyApplication;
  url: string;
}

/** One key for every start in this file, so that a restart opens what an earlier start sealed. */
const SECRETS_KEY = randomBytes(32).toString('base64');

/** The service as `patchbay serve` runs it, on a loopback port, on `database`. */
async function start(database: PersistentDatabase, env: Record<string, string>): Promise<Started> {
  const settings: Record<string, string | undefined> = { SECRETS_KEY, LOG_LEVEL: 'silent', ...process.env };
  delete settings.DATABASE_URL;
  const app = await createApiApp({
    database: { holder: 'test', runMigrations: true },
    env: { ...settings, ...database.env, ...env },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}` };
}

/**
 * EMBEDDINGS_PROVIDER=local runs the model with @huggingface/transformers, which the operator installs
 * (~470 MB with ONNX Runtime, so not a dependency): these run where it is installed
 * (`ONNXRUNTIME_NODE_INSTALL=skip npm install --no-save @huggingface/transformers@4.3.1`).
 */
const TRANSFORMERS_INSTALLED = (() => {
  try {
    createRequire(import.meta.url).resolve(TRANSFORMERS_PACKAGE);
    return true;
  } catch {
    return false;
  }
})();

describe('search embeddings: the local provider without its package', () => {
  it('says how to install the optional package when it is missing', () => {
    expect(() => assertPackageInstalled('@patchbay/not-installed')).toThrow(
      /EMBEDDINGS_PROVIDER=local needs the optional package @patchbay\/not-installed, which is not installed: install @patchbay\/not-installed \(ONNXRUNTIME_NODE_INSTALL=skip npm install/,
    );
  });
});

describe.runIf(TRANSFORMERS_INSTALLED)('search embeddings: a local ONNX model', () => {
  let root: string;
  let modelA: string;
  let modelB: string;
  let database: PersistentDatabase;
  let running: Started | undefined;
  let apiKey: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'patchbay-local-model-'));
    modelA = join(root, 'model-a');
    modelB = join(root, 'model-b');
    writeTinyModel(modelA, { dimensions: 8, concepts: CONCEPTS_A });
    writeTinyModel(modelB, { dimensions: 12, concepts: CONCEPTS_B });
    database = await PersistentDatabase.create(root);
    running = await start(database, localEnv(modelA));
    const ctx = new TestContext(running.app);
    apiKey = (await ctx.newProject()).apiKey;
    const zoo = await ctx.newApp({ name: 'ZOO', display_name: 'Zoo', description: 'Animal records' });
    await ctx.newFunction(zoo.name, { name: 'ZOO__TRACK', description: 'Track a zebra herd' });
    await ctx.newFunction(zoo.name, { name: 'ZOO__PAY', description: 'Pay an invoice for feed' });
    await ctx.newFunction(zoo.name, { name: 'ZOO__FORECAST', description: 'Forecast rain at the enclosure' });
  });

  afterAll(async () => {
    await running?.app.close();
    await database?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  function localEnv(dir: string): Record<string, string> {
    // Two texts per run of the model: the catalogue is embedded in several batches.
    return { EMBEDDINGS_PROVIDER: 'local', EMBEDDINGS_MODEL_DIR: dir, EMBEDDINGS_BATCH_SIZE: '2' };
  }

  async function restart(dir: string): Promise<void> {
    await running?.app.close();
    running = undefined;
    running = await start(database, localEnv(dir));
  }

  async function search(intent: string): Promise<{ status: number; names: string[] }> {
    const target = new URL('/v1/functions/search', running?.url);
    target.searchParams.set('intent', intent);
    target.searchParams.set('app_names', 'ZOO');
    const response = await fetch(target, { headers: { 'x-api-key': apiKey } });
    const body = (await response.json()) as { name: string }[];
    return { status: response.status, names: response.ok ? body.map((fn) => fn.name) : [] };
  }

  const storedModels = async (): Promise<{ model: string; dimensions: number; count: number; created: string }[]> =>
    (running as Started).app.get(DataSource).query(
      `SELECT model, dimensions, count(*)::int AS count, max(created_at)::text AS created
         FROM search_embeddings GROUP BY model, dimensions ORDER BY dimensions`,
    );

  const modelId = (dir: string) => createEmbeddingProvider(loadConfig(localEnv(dir)), undefined).model;

  it('embeds the catalogue and the intents with the model in EMBEDDINGS_MODEL_DIR', async () => {
    // No word in common with "Track a zebra herd": only the model relates them.
    const found = await search('stripes');

    expect(found.status).toBe(200);
    expect(found.names[0]).toBe('ZOO__TRACK');
    // 3 functions and their app, 8 dimensions, stored under an id naming the folder and its contents.
    expect(modelId(modelA)).toMatch(/^local:model-a:[0-9a-f]{12}$/);
    expect(await storedModels()).toEqual([
      { model: modelId(modelA), dimensions: 8, count: 4, created: expect.any(String) },
    ]);
  });

  it('re-embeds everything when restarted with another model of another dimension, on the same database', async () => {
    const [before] = await storedModels();

    await restart(modelB);
    const found = await search('stripes');

    // The same database (the project's key still works), every document embedded again by model B…
    expect(found.status).toBe(200);
    expect(await storedModels()).toEqual([
      before,
      { model: modelId(modelB), dimensions: 12, count: 4, created: expect.any(String) },
    ]);
    // …and ranking follows it: for model B, "stripes" is about invoices.
    expect(found.names[0]).toBe('ZOO__PAY');

    // Back to model A: its vectors are still current, nothing is embedded again.
    await restart(modelA);
    const again = await search('stripes');
    expect(again.names[0]).toBe('ZOO__TRACK');
    expect((await storedModels())[0]).toEqual(before);
  });

  it('identifies the model by its files: a changed model or document prefix is another model', () => {
    const copy = join(root, 'model-a-copy');
    writeTinyModel(copy, { dimensions: 8, concepts: CONCEPTS_A });
    const retrained = join(root, 'model-a-retrained');
    writeTinyModel(retrained, { dimensions: 8, concepts: [...CONCEPTS_A, ['sheep']] });
    const idOf = (dir: string, env: Record<string, string> = {}) =>
      createEmbeddingProvider(loadConfig({ ...localEnv(dir), ...env }), undefined).model;

    expect(idOf(copy).split(':')[2]).toBe(idOf(modelA).split(':')[2]);
    expect(idOf(retrained).split(':')[2]).not.toBe(idOf(modelA).split(':')[2]);
    expect(idOf(modelA, { EMBEDDINGS_DOCUMENT_PREFIX: 'passage: ' })).not.toBe(idOf(modelA));
    expect(idOf(modelA, { EMBEDDINGS_QUERY_PREFIX: 'query: ' })).toBe(idOf(modelA));
  });

  it('loads a quantized export (onnx/model_quantized.onnx) when there is no onnx/model.onnx', async () => {
    const quantized = join(root, 'model-q8');
    writeTinyModel(quantized, { dimensions: 8, concepts: CONCEPTS_A });
    renameSync(join(quantized, 'onnx', 'model.onnx'), join(quantized, 'onnx', 'model_quantized.onnx'));
    const provider = new LocalEmbeddingProvider({ dir: quantized, batchSize: 8, queryPrefix: 'query: ' });

    try {
      const [zebra, invoice] = await provider.embedDocuments(['a zebra', 'an invoice']);
      const stripes = await provider.embedQuery('stripes');

      expect(stripes).toHaveLength(8);
      expect(dot(stripes, zebra)).toBeGreaterThan(dot(stripes, invoice));
      expect(dot(stripes, stripes)).toBeCloseTo(1, 5);
    } finally {
      await provider.close();
    }
  });

  it('refuses to start, naming EMBEDDINGS_MODEL_DIR and why, when the folder is missing or holds no model', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const file = join(root, 'a-file');
    writeFileSync(file, '');

    expect(() => loadConfig({ EMBEDDINGS_PROVIDER: 'local' })).toThrow(
      /EMBEDDINGS_MODEL_DIR is required when EMBEDDINGS_PROVIDER=local/,
    );
    expect(() => loadConfig(localEnv(join(root, 'nowhere')))).toThrow(
      /EMBEDDINGS_MODEL_DIR=".*nowhere" does not exist/,
    );
    expect(() => loadConfig(localEnv(file))).toThrow(/EMBEDDINGS_MODEL_DIR=".*a-file" is not a folder/);
    expect(() => createEmbeddingProvider(loadConfig(localEnv(empty)), undefined)).toThrow(InvalidConfigError);
    expect(() => createEmbeddingProvider(loadConfig(localEnv(empty)), undefined)).toThrow(
      /EMBEDDINGS_MODEL_DIR=".*empty" has no config.json.*has no onnx\/model.onnx or onnx\/model_quantized.onnx/,
    );
    // The service itself does not start.
    await expect(start(database, localEnv(join(root, 'nowhere')))).rejects.toThrow(
      /Invalid configuration: EMBEDDINGS_MODEL_DIR=".*nowhere" does not exist/,
    );
  });

  it('reports a model file that cannot be loaded when embedding, not by crashing', async () => {
    const broken = join(root, 'model-broken');
    writeTinyModel(broken, { dimensions: 8, concepts: CONCEPTS_A });
    writeFileSync(join(broken, 'onnx', 'model.onnx'), 'not an onnx model');
    const provider = new LocalEmbeddingProvider({ dir: broken, batchSize: 8 });

    await expect(provider.embedQuery('anything')).rejects.toThrow(
      /the model in EMBEDDINGS_MODEL_DIR=".*model-broken" could not be loaded/,
    );
    await provider.close();
  });
});

function dot(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, i) => sum + value * b[i], 0);
}
