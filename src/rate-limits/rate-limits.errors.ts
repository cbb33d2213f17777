import { DomainError } from '../../libs/common/src/index.js';

/** 429 with the headers that say when to come back. */
export class RateLimitedError extends DomainError {
  readonly status = 429;

  constructor(
    message: string,
    override readonly headers: Readonly<Record<string, string>>,
  ) {
    super(message);
  }
}

export class RequestRateExceededError extends RateLimitedError {
  constructor(headers: Record<string, string>) {
    super(`Too many requests with this credential: retry after ${headers['retry-after']} s`, headers);
  }
}

export class OwnerExecutionRateExceededError extends RateLimitedError {
  constructor(headers: Record<string, string>) {
    super(`Too many executions for this linked-account owner: retry after ${headers['retry-after']} s`, headers);
  }
}

export class AuthFailuresExceededError extends RateLimitedError {
  constructor(retryAfterSeconds: number) {
    super(`Too many failed authentications from this address: retry after ${retryAfterSeconds} s`, {
      'retry-after': String(retryAfterSeconds),
    });
  }
}
