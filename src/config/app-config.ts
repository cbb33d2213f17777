import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  validateSync,
} from 'class-validator';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** What the configuration reference (docs/configuration.md, generated) says of one setting. */
export interface SettingInfo {
  name: string;
  /** Markdown: what it does, its values, what it interacts with. */
  description: string;
  /** Markdown, for a default that is not a plain value (computed, or depending on another setting). */
  defaultText?: string;
  /** Its value never appears in an error message. */
  secret: boolean;
}

const SETTINGS: SettingInfo[] = [];

/** Declares a property of AppConfig as a setting read from the environment variable of the same name. */
function Setting(description: string, options: { default?: string; secret?: boolean } = {}): PropertyDecorator {
  return (_target, property) => {
    SETTINGS.push({
      name: String(property),
      description,
      defaultText: options.default,
      secret: options.secret ?? false,
    });
  };
}
const toBool = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*(true|false|1|0)\s*$/i.test(value) ? /^\s*(true|1)\s*$/i.test(value) : value;

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;

const toNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;

/**
 * Every setting the service reads from its environment, validated once at start. Nothing else in
 * the code base reads `process.env`. docs/configuration.md is generated from this class (`npm run docs`).
 */
export class AppConfig {
  @Setting('Address to listen on (`0.0.0.0` in containers)')
  @IsOptional()
  @IsString()
  HOST = '127.0.0.1';

  @Setting('Port to listen on (`patchbay serve --port` overrides it)')
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 8000;

  @Setting(
    'PostgreSQL ≥ 15 with pgvector (`postgres://user:pass@host:5432/db`). Unset: the embedded database in `DATA_DIR`',
    { secret: true },
  )
  @IsOptional()
  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  DATABASE_URL?: string;

  @Setting('Embedded database folder (and its generated secrets key). One process at a time may open it')
  @IsString()
  DATA_DIR = './data';

  @Setting(
    '32 bytes (64 hex characters or base64) sealing stored credentials. **Required with `DATABASE_URL`**. Keep it: without it stored credentials cannot be read',
    { default: 'generated into `DATA_DIR/secrets.key` (embedded only)', secret: true },
  )
  @IsOptional()
  @IsString()
  SECRETS_KEY?: string;

  @Setting(
    'The key ring instead of `SECRETS_KEY`: comma-separated keys, **newest first**. New secrets are sealed with the first; each stored value names the key that sealed it (by a short hash, never the key) and is opened with it. Setting both is refused. See [rotating the sealing key](operations.md#rotating-the-sealing-key)',
    { secret: true },
  )
  @IsOptional()
  @IsString()
  SECRETS_KEYS?: string;

  @Setting('`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`')
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  @Setting(
    'Log lines as `json` (one JSON object a line, for collectors) or `pretty` (readable lines); `auto`: `pretty` when standard output is a terminal, else `json`',
  )
  @IsIn(LOG_FORMATS)
  LOG_FORMAT: LogFormat = 'auto';

  @Setting('Connections in the pool (PostgreSQL; the embedded database uses one)')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE = 10;

  @Setting('Address browsers reach the service at (OAuth 2.0 callback URL, connect links, the API docs)', {
    default: '`http://HOST:PORT`',
  })
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  PUBLIC_BASE_URL?: string;

  @Setting(
    "Comma-separated origins allowed for `after_oauth2_link_redirect_url` (`PUBLIC_BASE_URL`'s origin is always allowed)",
  )
  @IsOptional()
  @IsString()
  OAUTH2_REDIRECT_ALLOWED_ORIGINS?: string;

  @Setting('Bound on opening a connection to an upstream API during function execution')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_CONNECT_TIMEOUT_MS = 10_000;

  @Setting('Bound on one whole upstream exchange (request sent, response read)')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_TIMEOUT_MS = 30_000;

  @Setting('Larger upstream responses are refused, never buffered whole')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_MAX_RESPONSE_BYTES = 10_485_760;

  @Setting('Retries of GET, HEAD and OPTIONS calls on 429, 502, 503, 504 and connection resets')
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(10)
  EXECUTION_MAX_RETRIES = 2;

  @Setting('First retry backoff, doubled per attempt with jitter, when the upstream sends no `Retry-After`')
  @Transform(toInt)
  @IsInt()
  @Min(0)
  EXECUTION_RETRY_BASE_DELAY_MS = 200;

  @Setting('Total time one execution may spend waiting between retries')
  @Transform(toInt)
  @IsInt()
  @Min(0)
  EXECUTION_RETRY_MAX_WAIT_MS = 10_000;

  @Setting('How often buffered execution-log rows are written (sooner when many are waiting)')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EXECUTION_LOG_FLUSH_MS = 250;

  @Setting(
    'On SIGTERM or SIGINT, how long accepted requests may take to finish before their connections are cut; then the execution log is written, the database closed, and the process exits 0',
  )
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_TIMEOUT_MS = 10_000;

  @Setting("Comma-separated browser origins allowed to call `/v1/mcp` besides `PUBLIC_BASE_URL`'s (others get 403)")
  @IsOptional()
  @IsString()
  MCP_ALLOWED_ORIGINS?: string;

  @Setting(
    'Whether fetching a Client ID Metadata Document (an MCP client whose `client_id` is an https URL) may reach private, loopback or link-local addresses (tests, private deployments)',
  )
  @Transform(toBool)
  @IsBoolean()
  MCP_CLIENT_METADATA_ALLOW_PRIVATE = false;

  @Setting('PEM file of extra certificate authorities trusted when fetching client metadata documents (an internal CA)')
  @IsOptional()
  @IsString()
  MCP_CLIENT_METADATA_CA_FILE?: string;

  @Setting('Largest client metadata document accepted, in bytes')
  @Transform(toInt)
  @IsInt()
  @Min(512)
  @Max(65_536)
  MCP_CLIENT_METADATA_MAX_BYTES = 5_120;

  @Setting("How long fetching a client metadata document may take, in ms (oidc-provider's own limit is 2.5 s)")
  @Transform(toInt)
  @IsInt()
  @Min(100)
  @Max(2_500)
  MCP_CLIENT_METADATA_TIMEOUT_MS = 2_000;

  @Setting(
    'Largest text of one MCP tool result; longer results are cut with a `[truncated: …]` marker giving the full size',
  )
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  MCP_RESULT_MAX_BYTES = 100_000;

  @Setting(
    'Whether remote MCP servers added as apps (`patchbay catalog add-mcp`) may be on private, loopback or link-local addresses; off, such an address is refused when the server is added and at every connection. See [remote MCP servers](mcp-servers.md)',
  )
  @Transform(toBool)
  @IsBoolean()
  MCP_SERVERS_ALLOW_PRIVATE_NETWORKS = false;

  @Setting(
    "How often, in seconds, the HTTP service re-reads the tool lists of remote MCP servers that list their tools without an end user's credentials (0: never)",
  )
  @Transform(toInt)
  @IsInt()
  @Min(0)
  MCP_SERVERS_SYNC_INTERVAL_S = 3600;

  @Setting('How often an instance checks whether another instance changed configurations, accounts or the catalogue')
  @Transform(toInt)
  @IsInt()
  @Min(50)
  CACHE_SYNC_INTERVAL_MS = 1_000;

  @Setting('Attempts to deliver one connect-link webhook event (the first included) before giving up')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(20)
  CONNECT_LINK_WEBHOOK_ATTEMPTS = 6;

  @Setting('Wait before the first connect-link webhook retry, doubled per further attempt')
  @Transform(toInt)
  @IsInt()
  @Min(0)
  CONNECT_LINK_WEBHOOK_BACKOFF_MS = 1_000;

  @Setting('Form posts one connect link accepts per minute (wrong input included); more get 429')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  CONNECT_LINK_POSTS_PER_MINUTE = 10;

  @Setting(
    "How long an instance trusts an API key (or an MCP client's OAuth access token) it has checked without asking the database again: the bound within which a revocation or an expiry made elsewhere (another instance, the CLI) takes effect here",
  )
  @Transform(toInt)
  @IsInt()
  @Min(1)
  API_KEY_CACHE_TTL_MS = 5_000;

  @Setting(
    'Requests one API key (or MCP token) may make per `RATE_LIMIT_WINDOW_SECONDS`, all at once at most (the burst); more get 429 with `Retry-After`. `0` turns it off. Shared by every instance on PostgreSQL',
    { default: 'off on the embedded database, `600` on PostgreSQL' },
  )
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  RATE_LIMIT_REQUESTS?: number;

  @Setting('The window of `RATE_LIMIT_REQUESTS`')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  RATE_LIMIT_WINDOW_SECONDS = 60;

  @Setting(
    'Failed authentications (401) one client address may make per `AUTH_FAILURE_WINDOW_SECONDS`; then every request from it gets 429 until the window allows more. `0` turns it off',
  )
  @Transform(toInt)
  @IsInt()
  @Min(0)
  AUTH_FAILURE_LIMIT = 20;

  @Setting('The window of `AUTH_FAILURE_LIMIT`')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUTH_FAILURE_WINDOW_SECONDS = 60;

  @Setting(
    "Executions one linked-account owner may have per `OWNER_RATE_LIMIT_WINDOW_SECONDS` in a project, whatever credential asks for them (an app configuration's `owner_execution_limit` replaces it for its app); 0: no limit",
  )
  @Transform(toInt)
  @IsInt()
  @Min(0)
  OWNER_RATE_LIMIT_EXECUTIONS = 0;

  @Setting('The window, in seconds, of the per-owner execution budget')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  OWNER_RATE_LIMIT_WINDOW_SECONDS = 60;

  @Setting(
    'Comma-separated addresses or CIDR ranges of the load balancers in front of the service: a request from one of them is attributed to the client its `X-Forwarded-For` names (the failure budget counts per client). Unset: the peer address. Set it behind a balancer, or one client\'s failures lock out everyone behind it. Never "everyone": a client could then name any address it likes',
  )
  @IsOptional()
  @Matches(/^\s*[0-9A-Fa-f:.]+(\/\d{1,3})?(\s*,\s*[0-9A-Fa-f:.]+(\/\d{1,3})?)*\s*$/, {
    message: 'TRUST_PROXY must be comma-separated IP addresses or CIDR ranges (e.g. 10.0.0.0/8,127.0.0.1)',
  })
  TRUST_PROXY?: string;

  @Setting(
    'Days an audit record is kept: each instance of the HTTP service deletes older records once an hour (a minute after it starts, then hourly); unset: records are kept for ever. See [operations](operations.md#audit-log)',
  )
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  AUDIT_RETENTION_DAYS?: number;

  @Setting(
    "Port of the Prometheus endpoint (`GET /metrics`), served apart from the API so that it is never reachable through the API's address or its load balancer; unset: no metrics are kept at all. See [operations](operations.md)",
  )
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  METRICS_PORT?: number;

  @Setting('Address of the metrics endpoint: loopback unless a scraper elsewhere must reach it')
  @IsString()
  METRICS_HOST = '127.0.0.1';

  @Setting('When set, the metrics endpoint answers only `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise)', {
    secret: true,
  })
  @IsOptional()
  @IsString()
  METRICS_TOKEN?: string;

  @Setting('OTLP/HTTP traces endpoint (e.g. `http://collector:4318/v1/traces`); unset: no traces are made')
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  TRACING_OTLP_ENDPOINT?: string;

  @Setting('The `service.name` of the traces')
  @IsString()
  TRACING_SERVICE_NAME = 'patchbay';

  @Setting("Send the `traceparent` header to upstream APIs, so that their spans join the execution's trace")
  @Transform(toBool)
  @IsBoolean()
  TRACING_PROPAGATE_UPSTREAM = false;

  @Setting('How long, in ms, finished spans wait to be exported together')
  @Transform(toInt)
  @IsInt()
  @Min(1)
  TRACING_EXPORT_DELAY_MS = 2000;

  @Setting(
    'The share of requests traced, from 0 to 1, when the caller sends no `traceparent` (a request whose caller ' +
      'sent one follows its sampled flag); each unsampled request still pays for the trace context, not for spans',
  )
  @Transform(toNumber)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  TRACING_SAMPLE_RATIO = 1;

  get embedded(): boolean {
    return !this.DATABASE_URL;
  }

  get publicBaseUrl(): string {
    return (this.PUBLIC_BASE_URL ?? `http://${this.HOST}:${this.PORT}`).replace(/\/+$/, '');
  }
}

/**
 * Search embeds in process with its offline model only: the `openai` and `local` providers were
 * removed (issue #29: neither was shown to raise recall on users' intents). An operator who still
 * asks for one is refused at start rather than silently served another ranking than they chose.
 */
function removedSettingProblems(env: Record<string, string | undefined>): string[] {
  const provider = env.EMBEDDINGS_PROVIDER;
  return provider && provider !== 'offline'
    ? [
        `EMBEDDINGS_PROVIDER=${JSON.stringify(provider)} is no longer supported: search embeds with its built-in offline model only; unset EMBEDDINGS_PROVIDER (its other EMBEDDINGS_* settings are not read)`,
      ]
    : [];
}

export class InvalidConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
    this.name = 'InvalidConfigError';
  }
}

/** Reads the known variables from `env`; empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined>): AppConfig {
  const raw: Record<string, string> = {};
  for (const { name: key } of SETTINGS) {
    const value = env[key];
    if (value !== undefined && value !== '') {
      raw[key] = value;
    }
  }
  const config = plainToInstance(AppConfig, raw);
  const secret = new Set(SETTINGS.filter((setting) => setting.secret).map((setting) => setting.name));
  const problems = validateSync(config).map(
    (error) =>
      `${error.property}=${JSON.stringify(secret.has(error.property) ? '…' : error.value)} is invalid (${Object.values(error.constraints ?? {}).join(', ')})`,
  );
  problems.push(...removedSettingProblems(env));
  if (problems.length > 0) {
    throw new InvalidConfigError(problems);
  }
  return config;
}

/** Every setting, in the order of the class, with its default as the reference shows it. */
export function settings(): (SettingInfo & { defaultValue: unknown })[] {
  const defaults = new AppConfig() as unknown as Record<string, unknown>;
  return SETTINGS.map((setting) => ({ ...setting, defaultValue: defaults[setting.name] }));
}
