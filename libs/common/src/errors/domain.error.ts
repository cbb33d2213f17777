/**
 * Base of every error a service may throw on purpose. The HTTP status travels with the error so that
 * one filter can render all of them as `{"error": message}`; messages must name the thing concerned
 * and must never carry a secret.
 */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  /** Response headers that belong to the answer (e.g. `Retry-After` on a 429). */
  readonly headers?: Readonly<Record<string, string>>;

  constructor(message: string) {
    // No stack: a domain error is an answer (4xx), rendered by its status and message and never logged with
    // a stack, and capturing one walks the request's whole async chain. Measured on the auth-failure flood of
    // bench:auth-flood (every request a 429): the constructor took 4.5 % of the service's CPU, about 150 µs
    // per refused request, with the stack; see docs/benchmarks.md.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = new.target.name;
  }
}

export class BadRequestError extends DomainError {
  readonly status = 400;
}

export class UnauthorizedError extends DomainError {
  readonly status = 401;
}

export class ForbiddenError extends DomainError {
  readonly status = 403;
}

export class NotFoundError extends DomainError {
  readonly status = 404;
}

export class ConflictError extends DomainError {
  readonly status = 409;
}

export class UriTooLongError extends DomainError {
  readonly status = 414;
}

/** The path exists, but not with this method; `allow` lists the methods it has (the `Allow` header). */
export class MethodNotAllowedError extends DomainError {
  readonly status = 405;

  constructor(
    method: string,
    readonly allow: string[],
  ) {
    super(`Method ${method} is not allowed on this path; allowed: ${allow.join(', ')}`);
  }
}
