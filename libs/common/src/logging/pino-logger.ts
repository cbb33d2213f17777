import type { LoggerService } from '@nestjs/common';
import { pino, type Logger, type LevelWithSilent } from 'pino';

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

export function createPino(level: LevelWithSilent): Logger {
  return pino({
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
  });
}

/** Routes Nest's own logging (bootstrap, Logger instances) into the same pino stream. */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly pinoLogger: Logger) {}

  log(message: unknown, context?: string): void {
    this.pinoLogger.info({ context }, String(message));
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
