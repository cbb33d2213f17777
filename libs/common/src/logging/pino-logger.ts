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

export function createPino(level: LevelWithSilent): Logger {
  return pino({
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
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
