import { plainToInstance, Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, validateSync } from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;

/**
 * Every setting the service reads from its environment, validated once at start. Nothing else in
 * the code base reads `process.env`. The README's configuration table mirrors this class.
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

  /** How often an instance checks whether another instance changed cached rows (configurations, accounts, catalogue). */
  @Transform(toInt)
  @IsInt()
  @Min(50)
  CACHE_SYNC_INTERVAL_MS = 1_000;

  get embedded(): boolean {
    return !this.DATABASE_URL;
  }

  get publicBaseUrl(): string {
    return (this.PUBLIC_BASE_URL ?? `http://${this.HOST}:${this.PORT}`).replace(/\/+$/, '');
  }
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
  const extra = ['DATABASE_URL', 'SECRETS_KEY', 'PUBLIC_BASE_URL', 'OAUTH2_REDIRECT_ALLOWED_ORIGINS'];
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
      `${error.property}=${JSON.stringify(error.property === 'SECRETS_KEY' || error.property === 'DATABASE_URL' ? '…' : error.value)} is invalid (${Object.values(error.constraints ?? {}).join(', ')})`,
  );
  if (problems.length > 0) {
    throw new InvalidConfigError(problems);
  }
  return config;
}
