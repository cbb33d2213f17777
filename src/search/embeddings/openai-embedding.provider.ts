import { LRUCache } from 'lru-cache';
import { normalize, type EmbeddingProvider } from './embedding-provider.js';

export interface OpenAiEmbeddingOptions {
  /** Base address; `/embeddings` is appended. */
  url: string;
  model: string;
  apiKey?: string;
  dimensions?: number;
  timeoutMs: number;
  batchSize: number;
}

/** The endpoint failed or answered something that is not an embeddings response. */
export class EmbeddingsRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingsRequestError';
  }
}

interface EmbeddingsResponse {
  data?: { embedding?: unknown; index?: number }[];
}

/** Repeated intents (agents retry, users page) skip the round trip. */
const QUERY_CACHE_SIZE = 1000;

/**
 * Any endpoint speaking OpenAI's `POST /embeddings` (OpenAI, Azure-style gateways, Ollama, vLLM,
 * Hugging Face TEI…). Vectors are normalised here, so that similarity is a dot product whatever the
 * server returns.
 */
export class OpenAiEmbeddingProvider implements EmbeddingProvider {
  readonly model: string;
  /** Dense models give every pair of texts some similarity: nothing is cut off. */
  readonly minSimilarity = -1;
  private readonly endpoint: string;
  /** Concurrent requests for one intent share one round trip (lru-cache's fetch); a failed one is not kept. */
  private readonly queryCache = new LRUCache<string, Float32Array>({
    max: QUERY_CACHE_SIZE,
    fetchMethod: async (text) => (await this.request([text]))[0],
  });

  constructor(private readonly options: OpenAiEmbeddingOptions) {
    this.endpoint = `${options.url.replace(/\/+$/, '')}/embeddings`;
    this.model = `openai:${options.model}${options.dimensions ? `:${options.dimensions}` : ''}`;
  }

  async embedDocuments(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.options.batchSize) {
      out.push(...(await this.request(texts.slice(i, i + this.options.batchSize))));
    }
    return out;
  }

  embedQuery(text: string): Promise<Float32Array> {
    return this.queryCache.forceFetch(text);
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.apiKey) {
      headers.authorization = `Bearer ${this.options.apiKey}`;
    }
    const body: Record<string, unknown> = { model: this.options.model, input, encoding_format: 'float' };
    if (this.options.dimensions) {
      body.dimensions = this.options.dimensions;
    }
    let response: Response;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw new EmbeddingsRequestError(`Embeddings endpoint ${this.endpoint} unreachable: ${(error as Error).message}`);
    }
    if (!response.ok) {
      // The body may echo the request; only the status is reported, never the key.
      await response.body?.cancel();
      throw new EmbeddingsRequestError(`Embeddings endpoint ${this.endpoint} answered HTTP ${response.status}`);
    }
    const parsed = (await response.json()) as EmbeddingsResponse;
    const data = parsed.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new EmbeddingsRequestError(`Embeddings endpoint ${this.endpoint} returned no vector for some inputs`);
    }
    const vectors: Float32Array[] = new Array<Float32Array>(input.length);
    data.forEach((item, position) => {
      const index = typeof item.index === 'number' ? item.index : position;
      const embedding = item.embedding;
      if (!Array.isArray(embedding) || embedding.length === 0 || index < 0 || index >= input.length) {
        throw new EmbeddingsRequestError(`Embeddings endpoint ${this.endpoint} returned a malformed vector`);
      }
      vectors[index] = normalize(Float32Array.from(embedding as number[]));
    });
    if (vectors.some((vector) => vector === undefined)) {
      throw new EmbeddingsRequestError(`Embeddings endpoint ${this.endpoint} returned no vector for some inputs`);
    }
    return vectors;
  }
}
