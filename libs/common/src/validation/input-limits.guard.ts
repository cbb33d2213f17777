import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { INPUT_LIMITS, inputIssues } from './input-limits.js';
import { RequestValidationError } from './validation.error.js';

export interface RequestInput {
  params?: unknown;
  query?: unknown;
  body?: unknown;
}

const CHECKED_BY_HANDLER = 'patchbay:input-limits-checked-by-handler';

/**
 * For routes that authenticate their callers themselves (the MCP endpoints answer their own 401s): the
 * guard leaves the input to the handler, which checks it with checkInputLimits once the caller is known,
 * so that there too a caller without valid credentials learns nothing about the input.
 */
export const InputLimitsCheckedByHandler = () => SetMetadata(CHECKED_BY_HANDLER, true);

/** Throws RequestValidationError listing the violations of the request's path, query and body. */
export function checkInputLimits(request: RequestInput): void {
  const issues = inputIssues('path', request.params, INPUT_LIMITS);
  issues.push(...inputIssues('query', request.query, INPUT_LIMITS));
  issues.push(...inputIssues('body', request.body, INPUT_LIMITS));
  if (issues.length > 0) {
    throw new RequestValidationError(issues);
  }
}

/**
 * Applies the input limits (and the U+0000 refusal) to every route's whole path, query and body.
 * Not the validation pipe: it sees the raw input of every handler, including parameters bound as plain
 * strings and bodies no DTO describes. A global guard registered after the API-key guard, so it runs
 * after it and callers without a valid key learn nothing about the input. It was an interceptor: with
 * any interceptor at all, Nest runs every request through rxjs (an Observable chain, a ReplaySubject and
 * an AsyncResource per request), about 20 µs of CPU per execution in `npm run bench:execute`.
 */
@Injectable()
export class InputLimitsGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (
      context.getType() === 'http' &&
      !this.reflector.getAllAndOverride<boolean>(CHECKED_BY_HANDLER, [context.getHandler(), context.getClass()])
    ) {
      this.check(context.switchToHttp().getRequest<RequestInput>());
    }
    return true;
  }

  /** Throws RequestValidationError listing the violations of the request's path, query and body. */
  check(request: RequestInput): void {
    checkInputLimits(request);
  }
}
