import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpAdapterHost } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppConfig, InvalidConfigError, loadConfig } from '../../src/config/app-config.js';
import { createEmbeddingProvider } from '../../src/search/embeddings/embedding-provider.factory.js';
import { normalize, type EmbeddingProvider } from '../../src/search/embeddings/embedding-provider.js';
import { OfflineEmbeddingProvider } from '../../src/search/embeddings/offline-embedding.provider.js';
import { OpenAiEmbeddingProvider } from '../../src/search/embeddings/openai-embedding.provider.js';
import { Metrics } from '../../src/observability/metrics.js';
import { Tracing } from '../../src/observability/tracing.js';
import { SearchIndexService } from '../../src/search/search-index.service.js';
import { SearchIndexWriter } from '../../src/search/search-index-writer.js';
import { SearchRepository } from '../../src/search/search.repository.js';
import { TestApp } from '../helpers/test-app.js';

/**
 * A toy "semantic" model: each text gets weight on the concepts whose words it contains. "stripes"
 * and "zebra" share a concept although they share no word, so only the vectors can relate them.
 */
function conceptVector(text: string, concepts: string[][]): Float32Array {
  const words = text.toLowerCase().split(/[^a-z]+/);
  const vector = new Float32Array(concepts.length + 1);
  concepts.forEach((concept, i) => {
    vector[i] = words.filter((word) => concept.includes(word)).length;
  });
  vector[concepts.length] = 0.1;
  return normalize(vector);
}

const CONCEPTS_A = [
  ['zebra', 'stripes', 'striped'],
  ['invoice', 'bill', 'billing'],
  ['weather', 'rain', 'umbrella'],
];
/** Another model, of another size, that relates "stripes" to billing instead. */
const CONCEPTS_B = [['invoice', 'bill', 'stripes'], ['zebra'], ['weather', 'rain'], ['umbrella'], ['sheep']];

/** An OpenAI-compatible embeddings endpoint on 127.0.0.1 that records what it is sent. */
async function startFakeEmbeddings(): Promise<{
  url: string;
  requests: { auth?: string; body: any }[];
  server: Server;
}> {
  const requests: { auth?: string; body: any }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw);
      requests.push({ auth: req.headers.authorization, body });
      if (req.url !== '/v1/embeddings' || body.model !== 'fake-embed') {
        res.writeHead(404).end('{}');
        return;
      }
      // Answered out of order, as servers may: the index field puts them back.
      const data = (body.input as string[])
        .map((text, index) => ({ object: 'embedding', index, embedding: [...conceptVector(text, CONCEPTS_A)] }))
        .reverse();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests, server };
}

/** A local model that counts the texts it embeds. */
class CountingProvider implements EmbeddingProvider {
  readonly minSimilarity = -1;
  embedded: string[] = [];

  constructor(
    readonly model: string,
    private readonly concepts: string[][],
  ) {}

  embedDocuments(texts: string[]): Promise<Float32Array[]> {
    this.embedded.push(...texts);
    return Promise.resolve(texts.map((text) => conceptVector(text, this.concepts)));
  }

  embedQuery(text: string): Promise<Float32Array> {
    return Promise.resolve(conceptVector(text, this.concepts));
  }
}

describe('search embeddings: providers and models', () => {
  let fake: Awaited<ReturnType<typeof startFakeEmbeddings>>;
  let app: TestApp;
  let zebra: string;

  beforeAll(async () => {
    fake = await startFakeEmbeddings();
    app = await TestApp.start({
      EMBEDDINGS_PROVIDER: 'openai',
      EMBEDDINGS_URL: fake.url,
      EMBEDDINGS_MODEL: 'fake-embed',
      EMBEDDINGS_API_KEY: 'sk-test-secret',
    });
    await app.ctx.newProject();
    const zoo = await app.ctx.newApp({ name: 'ZOO', display_name: 'Zoo', description: 'Animal records' });
    zebra = (await app.ctx.newFunction(zoo.name, { name: 'ZOO__TRACK', description: 'Track a zebra herd' })).name;
    await app.ctx.newFunction(zoo.name, { name: 'ZOO__PAY', description: 'Pay an invoice for feed' });
    await app.ctx.newFunction(zoo.name, { name: 'ZOO__FORECAST', description: 'Forecast rain at the enclosure' });
  });

  afterAll(async () => {
    await app?.close();
    await new Promise((done) => fake?.server.close(done));
  });

  const search = (intent: string) => app.get('/v1/functions/search', { query: { intent, app_names: 'ZOO' } });
  const storedModels = async (): Promise<{ model: string; dimensions: number; count: number }[]> =>
    app.dataSource.query(
      `SELECT model, dimensions, count(*)::int AS count FROM search_embeddings GROUP BY model, dimensions ORDER BY model`,
    );

  it('embeds the catalogue and the intent through the OpenAI-compatible endpoint, and ranks with those vectors', async () => {
    // No word in common with "Track a zebra herd": only the vectors relate them.
    const res = await search('stripes');

    expect(res.status).toBe(200);
    expect(res.body[0].name).toBe(zebra);
    const inputs = fake.requests.flatMap((request) => request.body.input as string[]);
    expect(inputs).toContain('stripes');
    expect(inputs.some((text) => text.includes('Track a zebra herd'))).toBe(true);
    expect(fake.requests.every((request) => request.auth === 'Bearer sk-test-secret')).toBe(true);
    expect(fake.requests.every((request) => request.body.model === 'fake-embed')).toBe(true);
    // 3 functions and their app, 4 dimensions, stored under the model's id.
    expect(await storedModels()).toEqual([{ model: 'openai:fake-embed', dimensions: 4, count: 4 }]);
  });

  it('asks the endpoint once for an intent asked again or asked concurrently, and again after a failure', async () => {
    const provider = new OpenAiEmbeddingProvider({ url: fake.url, model: 'fake-embed', timeoutMs: 2000, batchSize: 8 });
    const asked = (text: string) =>
      fake.requests.filter((request) => (request.body.input as string[]).includes(text)).length;
    const [first, second] = await Promise.all([
      provider.embedQuery('herd of zebras'),
      provider.embedQuery('herd of zebras'),
    ]);
    expect(second).toBe(first);
    expect(await provider.embedQuery('herd of zebras')).toBe(first);
    expect(asked('herd of zebras')).toBe(1);

    const wrongModel = new OpenAiEmbeddingProvider({
      url: fake.url,
      model: 'no-such-model',
      timeoutMs: 2000,
      batchSize: 8,
    });
    await expect(wrongModel.embedQuery('lost intent')).rejects.toThrow();
    await expect(wrongModel.embedQuery('lost intent')).rejects.toThrow();
    expect(asked('lost intent')).toBe(2);
  });

  it('recomputes embeddings when the model changes, keeps the old ones apart and never uses them', async () => {
    const config = loadConfig({});
    const noHttp = { httpAdapter: undefined } as unknown as HttpAdapterHost;
    const repository = new SearchRepository(app.dataSource);
    const modelB = new CountingProvider('model-b', CONCEPTS_B);
    const withB = new SearchIndexService(
      repository,
      new SearchIndexWriter(repository, config, modelB),
      modelB,
      null,
      noHttp,
      new Metrics(config),
      new Tracing(config),
    );
    const request = { projectId: '00000000-0000-0000-0000-000000000000', appNames: ['ZOO'], configuredOnly: false };

    const ranked = await withB.searchFunctions({ ...request, intent: 'stripes', limit: 10, offset: 0 });

    // Every document is embedded again by the new model (of another dimension, in the same column)…
    expect(modelB.embedded).toHaveLength(4);
    expect(await storedModels()).toEqual([
      { model: 'model-b', dimensions: 6, count: 4 },
      { model: 'openai:fake-embed', dimensions: 4, count: 4 },
    ]);
    // …and ranking follows it: for model B, "stripes" is about invoices.
    expect(ranked?.[0].name).toBe('ZOO__PAY');

    // Nothing changed: nothing is embedded again.
    await withB.refresh();
    expect(modelB.embedded).toHaveLength(4);

    // One description changes: that function and its app (whose text includes it) are re-embedded.
    await app.dataSource.query(`UPDATE functions SET description = 'Count the sheep' WHERE name = 'ZOO__FORECAST'`);
    const sheep = await withB.searchFunctions({ ...request, intent: 'sheep', limit: 10, offset: 0 });
    expect(sheep?.[0].name).toBe('ZOO__FORECAST');
    expect(modelB.embedded.slice(4)).toHaveLength(2);
    expect(modelB.embedded.slice(4)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Functions: forecast, pay, track'),
        expect.stringContaining('Count the sheep'),
      ]),
    );

    // Back to the first model: its unchanged vectors are reused, only the changed texts are embedded.
    const modelA = new CountingProvider('openai:fake-embed', CONCEPTS_A);
    const withA = new SearchIndexService(
      repository,
      new SearchIndexWriter(repository, config, modelA),
      modelA,
      null,
      noHttp,
      new Metrics(config),
      new Tracing(config),
    );
    const again = await withA.searchFunctions({ ...request, intent: 'stripes', limit: 10, offset: 0 });
    expect(again?.[0].name).toBe(zebra);
    expect(modelA.embedded).toHaveLength(2);
  });

  it('reads every current embedding of a model page after page: stale ones and other models are left out, none is lost at a page end', async () => {
    const repository = new SearchRepository(app.dataSource);
    // 4,500 documents over three pages of 2,000; every 7th embedding is for an older text.
    await app.dataSource.query(
      `INSERT INTO search_documents (kind, name, app_name, fields, embedding_text, text_hash)
       SELECT 'function', 'PAGED__' || lpad(i::text, 5, '0'), 'PAGED', '{}'::jsonb, 'text', 'h' || i
         FROM generate_series(1, 4500) i`,
    );
    try {
      await app.dataSource.query(
        `INSERT INTO search_embeddings (kind, name, model, text_hash, dimensions, embedding)
         SELECT 'function', 'PAGED__' || lpad(i::text, 5, '0'), m.model,
                CASE WHEN i % 7 = 0 AND m.model = 'paged' THEN 'old' ELSE 'h' || i END, 3, ('[' || i || ',0,1]')::vector
           FROM generate_series(1, 4500) i, (VALUES ('paged'), ('other')) m(model)`,
      );
      const read: [string, number][] = [];
      await repository.eachEmbedding('paged', 'function', 'all', (row) => read.push([row.name, row.embedding[0]]));
      const expected = Array.from({ length: 4500 }, (_, k) => k + 1)
        .filter((i) => i % 7 !== 0)
        .map((i): [string, number] => [`PAGED__${String(i).padStart(5, '0')}`, i]);
      expect(read).toEqual(expected);
    } finally {
      await app.dataSource.query(`DELETE FROM search_documents WHERE app_name = 'PAGED'`);
    }
  });

  it('picks the provider the configuration names, and validates its settings', () => {
    const offline = createEmbeddingProvider(loadConfig({}), undefined);
    const openai = createEmbeddingProvider(
      loadConfig({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_URL: 'http://127.0.0.1:9/v1', EMBEDDINGS_MODEL: 'm' }),
      undefined,
    );

    expect(offline).toBeInstanceOf(OfflineEmbeddingProvider);
    expect(offline.model).toMatch(/^patchbay-hashed-v\d+-256$/);
    expect(openai).toBeInstanceOf(OpenAiEmbeddingProvider);
    expect(openai.model).toBe('openai:m');
    expect(() => loadConfig({ EMBEDDINGS_PROVIDER: 'openai' })).toThrow(InvalidConfigError);
    expect(() => loadConfig({ EMBEDDINGS_PROVIDER: 'openai', EMBEDDINGS_URL: 'http://127.0.0.1:9' })).toThrow(
      /EMBEDDINGS_MODEL is required/,
    );
    expect(() => loadConfig({ EMBEDDINGS_PROVIDER: 'magic' })).toThrow(/EMBEDDINGS_PROVIDER/);
    // A secret never appears in an error message.
    expect(() => loadConfig({ EMBEDDINGS_API_KEY: 'sk-secret', EMBEDDINGS_PROVIDER: 'nope' })).not.toThrow(/sk-secret/);
    expect(loadConfig({})).toBeInstanceOf(AppConfig);
  });

  it('keeps answering, lexically, when the embeddings endpoint is down', async () => {
    const down = new OpenAiEmbeddingProvider({
      url: 'http://127.0.0.1:9/v1',
      model: 'fake-embed',
      timeoutMs: 2000,
      batchSize: 8,
    });
    await expect(down.embedQuery('anything')).rejects.toThrow(/unreachable/);
    const repository = new SearchRepository(app.dataSource);
    const config = loadConfig({});
    const writer = new SearchIndexWriter(repository, config, down);
    const service = new SearchIndexService(
      repository,
      writer,
      down,
      null,
      { httpAdapter: undefined } as unknown as HttpAdapterHost,
      new Metrics(config),
      new Tracing(config),
    );

    const ranked = await service.searchFunctions({
      projectId: '00000000-0000-0000-0000-000000000000',
      appNames: ['ZOO'],
      configuredOnly: false,
      intent: 'zebra herd',
      limit: 10,
      offset: 0,
    });

    expect(ranked?.[0].name).toBe(zebra);
  });
});
