import type { HttpAdapterHost } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/app-config.js';
import {
  EMBEDDING_PROVIDER,
  normalize,
  type EmbeddingProvider,
} from '../../src/search/embeddings/embedding-provider.js';
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

/** What a removed provider (an OpenAI-compatible endpoint) stored: 4 dimensions. */
const CONCEPTS_A = [
  ['zebra', 'stripes', 'striped'],
  ['invoice', 'bill', 'billing'],
  ['weather', 'rain', 'umbrella'],
];
/** Another model, of another size, that relates "stripes" to billing instead. */
const CONCEPTS_B = [['invoice', 'bill', 'stripes'], ['zebra'], ['weather', 'rain'], ['umbrella'], ['sheep']];

/** The intents the tests search, told apart from the catalogue texts a provider embedded. */
const INTENTS = ['zebra herd', 'stripes', 'sheep'];

/** A model that records the texts it embeds. */
class CountingProvider implements EmbeddingProvider {
  readonly embedded: string[] = [];

  constructor(
    readonly model: string,
    readonly minSimilarity: number,
    private readonly vectorOf: (text: string) => Float32Array,
  ) {}

  embed(text: string): Float32Array {
    this.embedded.push(text);
    return this.vectorOf(text);
  }

  /** The catalogue texts it embedded. */
  documents(): string[] {
    return this.embedded.filter((text) => !INTENTS.includes(text));
  }
}

describe('search embeddings: the stored model', () => {
  let app: TestApp;
  let zebra: string;
  let defaultModel: EmbeddingProvider;

  beforeAll(async () => {
    app = await TestApp.start();
    defaultModel = app.app.get<EmbeddingProvider>(EMBEDDING_PROVIDER);
    await app.ctx.newProject();
    const zoo = await app.ctx.newApp({ name: 'ZOO', display_name: 'Zoo', description: 'Animal records' });
    zebra = (await app.ctx.newFunction(zoo.name, { name: 'ZOO__TRACK', description: 'Track a zebra herd' })).name;
    await app.ctx.newFunction(zoo.name, { name: 'ZOO__PAY', description: 'Pay an invoice for feed' });
    await app.ctx.newFunction(zoo.name, { name: 'ZOO__FORECAST', description: 'Forecast rain at the enclosure' });
  });

  afterAll(() => app?.close());

  const storedModels = async (): Promise<{ model: string; dimensions: number; count: number }[]> =>
    app.dataSource.query(
      `SELECT model, dimensions, count(*)::int AS count FROM search_embeddings GROUP BY model, dimensions ORDER BY model`,
    );
  const config = loadConfig({});
  const serviceWith = (provider: EmbeddingProvider) => {
    const repository = new SearchRepository(app.dataSource);
    return new SearchIndexService(
      repository,
      new SearchIndexWriter(repository, provider),
      provider,
      null,
      { httpAdapter: undefined } as unknown as HttpAdapterHost,
      new Metrics(config),
      new Tracing(config),
    );
  };
  const request = { projectId: '00000000-0000-0000-0000-000000000000', appNames: ['ZOO'], configuredOnly: false };
  const first = async (service: SearchIndexService, intent: string) =>
    (await service.searchFunctions({ ...request, intent, limit: 10, offset: 0 }))?.[0].name;

  it('embeds the catalogue and the intent with the built-in model, stored under its id', async () => {
    const res = await app.get('/v1/functions/search', { query: { intent: 'zebra herd', app_names: 'ZOO' } });

    expect(res.status).toBe(200);
    expect(res.body[0].name).toBe(zebra);
    // 3 functions and their app.
    expect(await storedModels()).toEqual([
      { model: defaultModel.model, dimensions: defaultModel.embed('zebra').length, count: 4 },
    ]);
  });

  it('re-embeds a database that holds another model’s vectors (a removed provider’s), keeps them apart and never uses them', async () => {
    // The database as a removed provider left it: its vectors only, for the current texts.
    await app.dataSource.query(`DELETE FROM search_embeddings`);
    const documents: { kind: string; name: string; embedding_text: string; text_hash: string }[] =
      await app.dataSource.query(`SELECT kind, name, embedding_text, text_hash FROM search_documents`);
    for (const doc of documents) {
      await app.dataSource.query(
        `INSERT INTO search_embeddings (kind, name, model, text_hash, dimensions, embedding) VALUES ($1, $2, $3, $4, 4, $5::vector)`,
        [
          doc.kind,
          doc.name,
          'openai:fake-embed',
          doc.text_hash,
          `[${conceptVector(doc.embedding_text, CONCEPTS_A).join(',')}]`,
        ],
      );
    }
    const builtIn = () =>
      new CountingProvider(defaultModel.model, defaultModel.minSimilarity, (text) => defaultModel.embed(text));
    const withDefault = builtIn();

    expect(await first(serviceWith(withDefault), 'zebra herd')).toBe(zebra);
    // Every document is embedded by the built-in model, beside the other model's vectors.
    expect(withDefault.documents()).toHaveLength(4);
    expect(await storedModels()).toEqual(
      [
        { model: defaultModel.model, dimensions: defaultModel.embed('zebra').length, count: 4 },
        { model: 'openai:fake-embed', dimensions: 4, count: 4 },
      ].sort((a, b) => (a.model < b.model ? -1 : 1)),
    );

    // Another model (of another dimension, in the same column): every document again…
    const modelB = new CountingProvider('model-b', -1, (text) => conceptVector(text, CONCEPTS_B));
    const withB = serviceWith(modelB);
    // …and ranking follows it: for model B, "stripes" is about invoices.
    expect(await first(withB, 'stripes')).toBe('ZOO__PAY');
    expect(modelB.documents()).toHaveLength(4);

    // Nothing changed: nothing is embedded again.
    await withB.refresh();
    expect(modelB.documents()).toHaveLength(4);

    // One description changes: that function and its app (whose text includes it) are re-embedded.
    await app.dataSource.query(`UPDATE functions SET description = 'Count the sheep' WHERE name = 'ZOO__FORECAST'`);
    expect(await first(withB, 'sheep')).toBe('ZOO__FORECAST');
    expect(modelB.documents().slice(4)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Functions: forecast, pay, track'),
        expect.stringContaining('Count the sheep'),
      ]),
    );
    expect(modelB.documents().slice(4)).toHaveLength(2);

    // Back to the built-in model: its unchanged vectors are reused, only the changed texts are embedded.
    const again = builtIn();
    expect(await first(serviceWith(again), 'sheep')).toBe('ZOO__FORECAST');
    expect(again.documents()).toHaveLength(2);
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
});
