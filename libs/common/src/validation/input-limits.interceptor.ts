import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { INPUT_LIMITS, inputIssues } from './input-limits.js';
import { RequestValidationError } from './validation.error.js';

interface RequestInput {
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

/**
 * Applies the input limits (and the U+0000 refusal) to every route's whole path, query and body.
 * An interceptor rather than the pipe: it sees the raw input of every handler, including parameters
 * bound as plain strings and bodies no DTO describes, and it runs after the API-key guard, so callers
 * without a valid key learn nothing about the input.
 */
@Injectable()
export class InputLimitsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      const request = context.switchToHttp().getRequest<RequestInput>();
      const issues = [
        ...inputIssues('path', request.params, INPUT_LIMITS),
        ...inputIssues('query', request.query, INPUT_LIMITS),
        ...inputIssues('body', request.body, INPUT_LIMITS),
      ];
      if (issues.length > 0) {
        throw new RequestValidationError(issues);
      }
    }
    return next.handle();
  }
}
