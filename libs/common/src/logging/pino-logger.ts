import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

/** Header and field names whose values are replaced by "[redacted]" in every log line. */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  '*.api_key',
  '*.password',
  '*.token',
  '*.client_secret',
  '*.access_token',
  '*.refresh_token',
];

/** Query parameters whose values never reach a log line (OAuth 2.0 codes and states, keys, tokens). */
const SECRET_QUERY_PARAMETERS =
  /^(code|state|access_token|refresh_token|token|api_key|apikey|key|client_secret|password)$/i;

/** The request URL with the values of secret-looking query parameters replaced. */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) {
    return url;
  }
  const params = new URLSearchParams(url.slice(query + 1));
  for (const name of [...params.keys()]) {
    if (SECRET_QUERY_PARAMETERS.test(name)) {
      params.set(name, '[redacted]');
    }
  }
  return `${url.slice(0, query)}?${params.toString()}`;
}

interface RequestLike {
  id?: string;
  method?: string;
  url?: string;
}

/**
 * The service's logger. `destination`: where the lines go (standard output when absent); tests pass a
 * capture to assert on what the real logger writes.
 *
 * Not `nestjs-pino`: it logs through `pino-http`, which makes an eager `logger.child({ req })` for
 * every request (serialised and redacted at once, whether or not a line is written). bench/request-logger.ts
 * at level `warn`: 11.5 µs per request for that child against 0.9 µs for LazyChildLogger below (x12.6,
 * 2-core machine under load), on every request for lines that are never written.
 */
export function createPino(level: LevelWithSilent, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: (request: RequestLike) => ({
        id: request.id,
        method: request.method,
        url: request.url === undefined ? undefined : redactUrl(request.url),
      }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/**
 * Log lines as a person reads them on a terminal (pino-pretty), written to `destination` (standard
 * output when absent). pino-pretty is loaded only here, so a service logging JSON never loads it.
 */
export async function prettyLogStream(destination?: DestinationStream): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    destination: destination ?? 1,
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,context',
    messageFormat: '{if context}[{context}] {end}{msg}',
    sync: true,
  });
}

/**
 * Nest's start-up narration: a line per module initialised and per route mapped (about 60 lines),
 * which says nothing an operator acts on. Logged at `debug`, where it helps to see which routes exist.
 */
const START_UP_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/** Routes Nest's own logging (bootstrap, Logger instances) into the same pino stream. */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly pinoLogger: Logger) {}

  log(message: unknown, context?: string): void {
    if (context !== undefined && START_UP_CONTEXTS.has(context)) {
      this.pinoLogger.debug({ context }, String(message));
    } else {
      this.pinoLogger.info({ context }, String(message));
    }
  }

  error(message: unknown, trace?: string, context?: string): void {
    this.pinoLogger.error({ context, trace }, String(message));
  }

  warn(message: unknown, context?: string): void {
    this.pinoLogger.warn({ context }, String(message));
  }

  debug(message: unknown, context?: string): void {
    this.pinoLogger.debug({ context }, String(message));
  }

  verbose(message: unknown, context?: string): void {
    this.pinoLogger.trace({ context }, String(message));
  }
}

/**
 * The logger Fastify gives each request (`request.log`), made on first use: pino's `child()`
 * serialises and redacts the bindings when it is called, which on a busy service at `warn` level
 * would be paid on every request for log lines that are never written. Calls below the level
 * return at once; the first enabled call creates the real child with the same bindings.
 */
export class LazyChildLogger {
  private real?: Logger;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: Record<string, unknown>,
  ) {}

  get level(): string {
    return (this.real ?? this.parent).level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.real ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Record<string, unknown>, options?: Record<string, unknown>): Logger {
    return this.logger().child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  private write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    if (this.real || this.parent.isLevelEnabled(level)) {
      const logger = this.logger();
      Reflect.apply(logger[level], logger, args);
    }
  }

  private logger(): Logger {
    this.real ??= this.parent.child(this.bindings, this.options);
    return this.real;
  }
}
