import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { RequestValidationError } from '../validation/validation.error.js';
import { DomainError } from './domain.error.js';

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
    reply.status(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
  }

  render(exception: unknown): [number, unknown] {
    if (exception instanceof RequestValidationError) {
      return [422, { detail: exception.detail }];
    }
    if (exception instanceof DomainError) {
      return [exception.status, { error: exception.message }];
    }
    if (exception instanceof HttpException) {
      return [exception.getStatus(), { error: exception.message }];
    }
    const framework = exception as FrameworkError;
    if (framework?.code === 'FST_ERR_CTP_INVALID_JSON' || framework?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      const msg = framework.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'Field required' : 'JSON decode error';
      const type = framework.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'missing' : 'json_invalid';
      return [422, { detail: [{ loc: ['body'], msg, type }] }];
    }
    if (typeof framework?.statusCode === 'number' && framework.statusCode >= 400 && framework.statusCode < 500) {
      return [framework.statusCode, { error: framework.message ?? 'Bad request' }];
    }
    this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    return [500, { error: 'Internal server error' }];
  }
}
