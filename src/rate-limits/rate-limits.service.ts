import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { UnauthorizedError } from '../../libs/common/src/index.js';
import { AppConfig } from '../config/app-config.js';
import { AuthFailuresExceededError, RequestRateExceededError } from './rate-limits.errors.js';
import { RateLimitsRepository } from './rate-limits.repository.js';

/** On PostgreSQL the request limit is on unless RATE_LIMIT_REQUESTS says otherwise: 600 per window. */
export const RATE_LIMIT_REQUESTS_SERVER_DEFAULT = 600;
const IDLE_CLEANUP_MS = 60_000;
const BLOCKED_ADDRESSES_MAX = 10_000;

/** What a granted request is told about its budget (IETF draft `RateLimit-*` fields). */
export type RateLimitHeaders = Record<string, string>;

/**
 * Request budgets per credential and failure budgets per client address, shared by every instance.
 *
 * Why not @fastify/rate-limit: its stores are in-memory (one per instance, so N instances would
 * allow N times the limit) and Redis, which Patchbay does not run. The limiter here is GCRA (one
 * theoretical arrival time per subject) in one atomic UPDATE on an UNLOGGED table of the database
 * the instances already share, so the limit is global on PostgreSQL and works the same on the
 * embedded database. Its cost is one statement per request, which is why it is off by default on
 * the embedded database (one instance, one user).
 */
@Injectable()
export class RateLimitsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('RateLimits');
  private readonly requests: number;
  private readonly windowMs: number;
  /** Addresses over their failure budget, until when (ms since the epoch): refused without a database query. */
  private readonly blocked = new Map<string, number>();
  private cleanup?: NodeJS.Timeout;

  constructor(
    private readonly repository: RateLimitsRepository,
    private readonly config: AppConfig,
    private readonly http: HttpAdapterHost,
  ) {
    this.requests = config.RATE_LIMIT_REQUESTS ?? (config.embedded ? 0 : RATE_LIMIT_REQUESTS_SERVER_DEFAULT);
    this.windowMs = config.RATE_LIMIT_WINDOW_SECONDS * 1000;
  }

  /**
   * Only a process that answers requests spends budgets, so only it clears idle ones: a command-line
   * import on the embedded database holds its one connection for seconds per document, and a
   * cleanup waiting behind it timed out with a warning.
   */
  onApplicationBootstrap(): void {
    if (this.http.httpAdapter && (this.requests > 0 || this.config.AUTH_FAILURE_LIMIT > 0)) {
      this.cleanup = setInterval(() => {
        this.repository
          .deleteIdle()
          .catch((error: unknown) => this.logger.warn(`Idle cleanup failed: ${String(error)}`));
      }, IDLE_CLEANUP_MS).unref();
    }
  }

  onModuleDestroy(): void {
    clearInterval(this.cleanup);
  }

  get enabled(): boolean {
    return this.requests > 0;
  }

  /**
   * Spends one request of a credential's budget (`subject`: `key:<id>` or `mcp:<id>`); the
   * headers to send with the answer, or RequestRateExceededError (429) when the budget is spent.
   */
  async spendRequest(subject: string): Promise<RateLimitHeaders | undefined> {
    if (this.requests <= 0) {
      return undefined;
    }
    const interval = this.windowMs / this.requests;
    const spend = await this.repository.spend(subject, interval, this.windowMs);
    const policy = `${this.requests};w=${this.windowMs / 1000}`;
    if (spend.granted !== null) {
      return {
        'ratelimit-policy': policy,
        'ratelimit-limit': String(this.requests),
        'ratelimit-remaining': String(Math.max(0, Math.floor((spend.now + this.windowMs - spend.granted) / interval))),
        'ratelimit-reset': String(Math.max(0, Math.ceil((spend.granted - spend.now) / 1000))),
      };
    }
    const retryAfter = secondsUntil((spend.previous ?? spend.now) + interval - this.windowMs, spend.now);
    throw new RequestRateExceededError({
      'retry-after': String(retryAfter),
      'ratelimit-policy': policy,
      'ratelimit-limit': String(this.requests),
      'ratelimit-remaining': '0',
      'ratelimit-reset': String(retryAfter),
    });
  }

  /**
   * Runs an authentication for a client address: refused with 429 while the address is over its
   * failure budget (before the credentials are looked at), and a 401 it ends with is counted.
   */
  async authenticateFrom<T>(address: string, authenticate: () => Promise<T>): Promise<T> {
    this.checkAddress(address);
    try {
      return await authenticate();
    } catch (error) {
      if (error instanceof UnauthorizedError) {
        throw (await this.recordFailure(address)) ?? error;
      }
      throw error;
    }
  }

  private checkAddress(address: string): void {
    const until = this.blocked.get(address);
    if (until === undefined) {
      return;
    }
    const now = Date.now();
    if (until <= now) {
      this.blocked.delete(address);
      return;
    }
    throw new AuthFailuresExceededError(secondsUntil(until, now));
  }

  /**
   * Counts a failed authentication from an address; once AUTH_FAILURE_LIMIT failures fall in
   * AUTH_FAILURE_WINDOW_SECONDS, returns the 429 to answer instead of the 401.
   */
  private async recordFailure(address: string): Promise<AuthFailuresExceededError | undefined> {
    const limit = this.config.AUTH_FAILURE_LIMIT;
    if (limit <= 0) {
      return undefined;
    }
    const windowMs = this.config.AUTH_FAILURE_WINDOW_SECONDS * 1000;
    const interval = windowMs / limit;
    const spend = await this.repository.spend(`auth-failure:${address}`, interval, windowMs);
    if (spend.granted !== null) {
      return undefined;
    }
    const waitMs = (spend.previous ?? spend.now) + interval - windowMs - spend.now;
    if (this.blocked.size >= BLOCKED_ADDRESSES_MAX) {
      this.blocked.clear();
    }
    this.blocked.set(address, Date.now() + waitMs);
    return new AuthFailuresExceededError(secondsUntil(spend.now + waitMs, spend.now));
  }
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
