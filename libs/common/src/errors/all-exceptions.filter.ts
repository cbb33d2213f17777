import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { RequestValidationError } from '../validation/validation.error.js';
import { DatabaseUnavailableError, isDatabaseConnectionError, isDatabaseTimeout } from './database-unavailable.js';
import { DomainError, MethodNotAllowedError } from './domain.error.js';

interface ReplyLike {
  status(code: number): ReplyLike;
  header(name: string, value: string): ReplyLike;
  send(body?: unknown): unknown;
}

interface FrameworkError {
  statusCode?: number;
  code?: string;
  message?: string;
}

/**
 * The one place errors become HTTP answers. Domain errors keep their status and message; input
 * problems become 422; anything unexpected becomes a generic 500 whose details only reach the log.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<ReplyLike>();
    const [status, body] = this.render(exception);
    if (exception instanceof MethodNotAllowedError) {
      reply.header('allow', exception.allow.join(', '));
    }
    if (exception instanceof DomainError && exception.headers) {
      for (const [name, value] of Object.entries(exception.headers)) {
        reply.header(name, value);
      }
    }
    reply.status(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
  }

  render(exception: unknown): [number, unknown] {
    if (exception instanceof RequestValidationError) {
      return [422, { detail: exception.detail }];
    }
    if (exception instanceof DomainError) {
      return [exception.status, { error: exception.message }];
    }
    // Fastify's body-parser errors arrive wrapped in an HttpException by the Nest adapter (the
    // original is its `cause`), so they are recognised before the generic HttpException case.
    const bodyError = malformedBodyCode(exception);
    if (bodyError) {
      const empty = bodyError === 'FST_ERR_CTP_EMPTY_JSON_BODY';
      return [
        422,
        {
          detail: [
            {
              loc: ['body'],
              msg: empty ? 'Field required' : 'JSON decode error',
              type: empty ? 'missing' : 'json_invalid',
            },
          ],
        },
      ];
    }
    if (exception instanceof HttpException) {
      return [exception.getStatus(), { error: exception.message }];
    }
    const framework = exception as FrameworkError;
    if (typeof framework?.statusCode === 'number' && framework.statusCode >= 400 && framework.statusCode < 500) {
      return [framework.statusCode, { error: framework.message ?? 'Bad request' }];
    }
    // A query that could not reach the database, or that it did not answer in time, wherever it was
    // made: the client may retry (503).
    if (isDatabaseConnectionError(exception) || isDatabaseTimeout(exception)) {
      return this.render(new DatabaseUnavailableError());
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    return [500, { error: 'Internal server error' }];
  }
}

// Fastify 5 names the invalid-JSON error FST_ERR_CTP_INVALID_JSON_BODY; older releases dropped `_BODY`.
const MALFORMED_BODY_CODES = new Set([
  'FST_ERR_CTP_INVALID_JSON_BODY',
  'FST_ERR_CTP_INVALID_JSON',
  'FST_ERR_CTP_EMPTY_JSON_BODY',
]);

function malformedBodyCode(exception: unknown): string | undefined {
  const candidates = [exception, exception instanceof Error ? exception.cause : undefined];
  for (const candidate of candidates) {
    const code = (candidate as FrameworkError | undefined)?.code;
    if (code && MALFORMED_BODY_CODES.has(code)) {
      return code;
    }
  }
  return undefined;
}
