import { Logger } from '@nestjs/common';
import type { EmbeddingProvider } from './embedding-provider.js';
import { loadSentenceEncoder, type SentenceEncoder, type SentenceEncoderSource } from './sentence-encoder.js';

export interface EncoderEmbeddingOptions {
  /** Share of the cosine similarity that comes from the encoder's vector (the rest: the offline vector). */
  share: number;
  /** Weight of the vector side next to the lexical score (the engine's `vectorWeight`). */
  vectorWeight: number;
  /**
   * The encoder reads a catalogue text's first this many words (the app or function name and the
   * start of its description); intents whole. 0: whole texts.
   */
  documentWords: number;
  /** Intent vectors kept (most recently used): a next page, or an agent asking again, is not re-encoded. */
  queryCache: number;
}

/**
 * The setting of bench/cross-validate.ts's `hybrid: sentence encoder, documents cut` family chosen on
 * every fold (and on all dev intents): whole catalogue texts did worse across folds (functions MRR
 * 0.776 against 0.800), and cost twice the encoding time.
 */
export const ENCODER_EMBEDDING_DEFAULTS: EncoderEmbeddingOptions = {
  share: 0.75,
  vectorWeight: 0.6,
  documentWords: 16,
  queryCache: 512,
};

/** The first `words` words of a text (all of it for 0). */
export function firstWords(text: string, words: number): string {
  return words > 0 ? text.split(/\s+/).slice(0, words).join(' ') : text;
}

/**
 * The offline vector (hashed features, and the word vectors' sentence vector when installed) with a
 * sentence encoder's vector beside it: each part unit length and scaled by the square root of its
 * share, so that the cosine of two such vectors is the share-weighted sum of the parts' cosines. The
 * encoder reads the whole sentence (word order, context), the offline part keeps spelling and names.
 */
export class EncoderEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  readonly minSimilarity: number;
  readonly vectorWeight: number;
  private loading?: Promise<SentenceEncoder>;
  private readonly queries = new Map<string, Float32Array>();

  constructor(
    private readonly offline: EmbeddingProvider,
    private readonly source: SentenceEncoderSource,
    private readonly options: EncoderEmbeddingOptions = ENCODER_EMBEDDING_DEFAULTS,
  ) {
    this.model = `${offline.model}+use-lite-${source.version}-s${options.share}-w${options.documentWords}`;
    this.minSimilarity = offline.minSimilarity;
    this.vectorWeight = options.vectorWeight;
  }

  async embedDocuments(texts: string[]): Promise<Float32Array[]> {
    const [offline, encoded] = await Promise.all([
      this.offline.embedDocuments(texts),
      this.encode(texts.map((text) => firstWords(text, this.options.documentWords))),
    ]);
    return offline.map((vector, i) => this.join(vector, encoded[i]));
  }

  async embedQuery(text: string): Promise<Float32Array> {
    const cached = this.queries.get(text);
    if (cached) {
      // Most recently used last: the first key is the one to drop.
      this.queries.delete(text);
      this.queries.set(text, cached);
      return cached;
    }
    const [offline, [encoded]] = await Promise.all([this.offline.embedQuery(text), this.encode([text])]);
    const vector = this.join(offline, encoded);
    if (this.options.queryCache > 0) {
      if (this.queries.size >= this.options.queryCache) {
        this.queries.delete(this.queries.keys().next().value as string);
      }
      this.queries.set(text, vector);
    }
    return vector;
  }

  async close(): Promise<void> {
    await this.offline.close?.();
  }

  private async encode(texts: string[]): Promise<Float32Array[]> {
    // Loaded on first use: commands that never embed never pay for the model (75–90 MB).
    this.loading ??= loadSentenceEncoder(this.source, { log: (message) => new Logger('Search').log(message) }).then(
      (encoder) => {
        if (!encoder) {
          throw new Error(`the sentence encoder's packages could not be loaded`);
        }
        return encoder;
      },
    );
    return (await this.loading).encode(texts);
  }

  private join(offline: Float32Array, encoded: Float32Array): Float32Array {
    const a = Math.sqrt(1 - this.options.share);
    const b = Math.sqrt(this.options.share);
    const out = new Float32Array(offline.length + encoded.length);
    offline.forEach((value, i) => (out[i] = a * value));
    encoded.forEach((value, i) => (out[offline.length + i] = b * value));
    return out;
  }
}
