import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SemanticEmbeddingProvider } from '../../src/search/embeddings/semantic-embedding.provider.js';
import {
  loadWordVectors,
  sentenceVector,
  shippedWordVectors,
  WORD_VECTORS_FILE,
  WordVectors,
} from '../../src/search/embeddings/word-vectors.js';
import { buildWordVectors, wordVectorSource } from '../../scripts/build-word-vectors.js';

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

  it('corrupt or truncated files are refused', async () => {
    const dir = tempDir();
    const json = join(dir, 'vectors.json');
    writeFileSync(json, packageJson(small));
    const bytes = (await buildWordVectors(json, 'x', { maxRank: 100, components: 1 })).serialize();
    expect(() => WordVectors.deserialize(bytes.subarray(0, bytes.length - 3))).toThrow(/truncated/);
    expect(() => WordVectors.deserialize(Buffer.from('nonsense'))).toThrow(/not a word-vector file/);
  });

  it('finds the shipped file in the nearest assets/ above the module (src/ or dist/), and is absent without one', async () => {
    const dir = tempDir();
    const json = join(dir, 'vectors.json');
    writeFileSync(json, packageJson(small));
    const nested = join(dir, 'app', 'dist', 'src', 'search');
    mkdirSync(nested, { recursive: true });
    expect(shippedWordVectors(nested)).toBeUndefined();
    expect(loadWordVectors(join(dir, 'missing.bin'))).toBeUndefined();
    expect(wordVectorSource(dir)).toBeUndefined();
    mkdirSync(join(dir, 'app', 'assets'));
    const file = join(dir, 'app', WORD_VECTORS_FILE);
    writeFileSync(file, (await buildWordVectors(json, 'x', { maxRank: 100, components: 1 })).serialize());
    expect(shippedWordVectors(nested)).toBe(file);
    expect(loadWordVectors(shippedWordVectors(nested))?.words).toContain('invoice');
  });
});

// The file the repository ships (npm run build:word-vectors).
describe('the shipped word vectors', () => {
  it('put words of the same job closer than unrelated words (pairs from the providers’ domain)', () => {
    const vectors = loadWordVectors()!;
    expect(vectors.size).toBeGreaterThan(20_000);
    const pairs: [string, string, string][] = [
      ['invoice', 'payment', 'weather'],
      ['spreadsheet', 'table', 'volcano'],
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

  it('the provider’s model id names the word vectors, so a change of them re-embeds', () => {
    const vectors = loadWordVectors()!;
    const provider = new SemanticEmbeddingProvider(vectors, undefined);
    expect(provider.model).toContain(vectors.id);
    expect(provider.embed('Creates a refund for a charge')).toHaveLength(256 + 100);
  });
});
