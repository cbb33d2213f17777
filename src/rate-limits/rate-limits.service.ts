import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { UnauthorizedError } from '../../libs/common/src/index.js';
import { AppConfig } from '../config/app-config.js';
import { Metrics, type RateLimitBudget } from '../observability/metrics.js';
import {
  AuthFailuresExceededError,
  OwnerExecutionRateExceededError,
  type RateLimitedError,
  RequestRateExceededError,
} from './rate-limits.errors.js';
import { BudgetLeases, type LeaseDecision, secondsUntil } from './budget-leases.js';
import { RateLimitsRepository } from './rate-limits.repository.js';

/** On PostgreSQL the request limit is on unless RATE_LIMIT_REQUESTS says otherwise: 600 per window. */
export const RATE_LIMIT_REQUESTS_SERVER_DEFAULT = 600;
const IDLE_CLEANUP_MS = 60_000;
const BLOCKED_ADDRESSES_MAX = 10_000;

/** What a granted request is told about its budget (IETF draft `RateLimit-*` fields). */
export type RateLimitHeaders = Record<string, string>;

/**
 * The fields for an answer two budgets granted (the credential's and the owner's): the policies of both, and the
 * limit, remaining and reset of the one with fewer requests left, as the IETF draft says to when several apply.
 */
export function tighterBudget(first: RateLimitHeaders | undefined, second: RateLimitHeaders): RateLimitHeaders {
  if (!first) {
    return second;
  }
  const tighter = Number(second['ratelimit-remaining']) < Number(first['ratelimit-remaining']) ? second : first;
  return { ...tighter, 'ratelimit-policy': `${first['ratelimit-policy']}, ${second['ratelimit-policy']}` };
}

/** Adds an owner budget's fields to an answer that may already carry the credential's (see tighterBudget). */
export function addBudgetHeaders(
  reply: { getHeader(name: string): unknown; headers(values: Record<string, string>): unknown },
  budget: RateLimitHeaders,
): void {
  const policy = reply.getHeader('ratelimit-policy');
  const existing =
    typeof policy === 'string'
      ? {
          'ratelimit-policy': policy,
          'ratelimit-limit': String(reply.getHeader('ratelimit-limit')),
          'ratelimit-remaining': String(reply.getHeader('ratelimit-remaining')),
          'ratelimit-reset': String(reply.getHeader('ratelimit-reset')),
        }
      : undefined;
  reply.headers(tighterBudget(existing, budget));
}

/**
 * Request budgets per credential and failure budgets per client address, shared by every instance.
 *
 * Why not @fastify/rate-limit: its stores are in-memory (one per instance, so N instances would
 * allow N times the limit) and Redis, which Patchbay does not run. The limiter here is GCRA (one
 * theoretical arrival time per subject) in one atomic UPDATE on an UNLOGGED table of the database
 * the instances already share, so the limit is global on PostgreSQL and works the same on the
 * embedded database. Request and owner budgets are spent in leases (BudgetLeases: a statement per lease of
 * several requests when a subject is busy, one per request when it is not); the request budget is still off by
 * default on the embedded database (one instance, one user).
 */
@Injectable()
export class RateLimitsService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('RateLimits');
  private readonly requests: number;
  private readonly windowMs: number;
  /** Addresses over their failure budget, until when (ms since the epoch): refused without a database query. */
  private readonly blocked = new Map<string, number>();
  private readonly leases: BudgetLeases;
  private cleanup?: NodeJS.Timeout;

  constructor(
    private readonly repository: RateLimitsRepository,
    private readonly config: AppConfig,
    private readonly http: HttpAdapterHost,
    private readonly metrics: Metrics,
  ) {
    this.requests = config.RATE_LIMIT_REQUESTS ?? (config.embedded ? 0 : RATE_LIMIT_REQUESTS_SERVER_DEFAULT);
    this.windowMs = config.RATE_LIMIT_WINDOW_SECONDS * 1000;
    this.leases = new BudgetLeases((subject, intervalMs, windowMs, count) =>
      repository.spend(subject, intervalMs, windowMs, count),
    );
  }

  /**
   * Only a process that answers requests spends budgets, so only it clears idle ones: a command-line
   * import on the embedded database holds its one connection for seconds per document, and a
   * cleanup waiting behind it timed out with a warning. (Any app configuration may set an owner budget,
   * so a serving process always clears: one DELETE a minute.)
   */
  onApplicationBootstrap(): void {
    if (this.http.httpAdapter) {
      this.cleanup = setInterval(() => {
        this.leases.prune();
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
  spendRequest(subject: string): Promise<RateLimitHeaders | undefined> {
    if (this.requests <= 0) {
      return Promise.resolve(undefined);
    }
    return this.spend(
      'request',
      subject,
      this.requests,
      this.windowMs,
      (headers) => new RequestRateExceededError(headers),
    );
  }

  /**
   * Spends one execution of a linked-account owner's budget in a project: `limit` per OWNER_RATE_LIMIT_WINDOW_SECONDS,
   * the app configuration's own when it sets one (then counted per app), else OWNER_RATE_LIMIT_EXECUTIONS (counted
   * over every app of the project). Undefined, not a promise, when no limit applies: the execute path then
   * pays neither a statement nor a microtask.
   */
  spendExecution(
    projectId: string,
    ownerId: string,
    app: { name: string; limit: number | null },
  ): Promise<RateLimitHeaders> | undefined {
    const limit = app.limit ?? this.config.OWNER_RATE_LIMIT_EXECUTIONS;
    if (limit <= 0) {
      return undefined;
    }
    // The owner id is the end user's: it is used as a cell key (never a log line or a metric label).
    const subject = app.limit === null ? `owner:${projectId}:${ownerId}` : `owner:${projectId}:${app.name}:${ownerId}`;
    return this.spend(
      'owner',
      subject,
      limit,
      this.config.OWNER_RATE_LIMIT_WINDOW_SECONDS * 1000,
      (headers) => new OwnerExecutionRateExceededError(headers),
    );
  }

  /**
   * GCRA: `limit` per `windowMs`, all at once at most; the IETF draft's `RateLimit-*` fields, or the refusal. A
   * request granted from this instance's lease is answered without awaiting anything (BudgetLeases.spend).
   */
  private spend(
    budget: RateLimitBudget,
    subject: string,
    limit: number,
    windowMs: number,
    refusal: (headers: RateLimitHeaders) => RateLimitedError,
  ): Promise<RateLimitHeaders> {
    const decision = this.leases.spend(subject, limit, windowMs);
    if (decision instanceof Promise) {
      return decision.then((settled) => this.answer(budget, limit, windowMs, settled, refusal));
    }
    // The refusal `answer` throws rejects the promise, as from the lease's path.
    return new Promise((resolve) => resolve(this.answer(budget, limit, windowMs, decision, refusal)));
  }

  /** A budget's decision as the answer's headers, or the refusal to throw. */
  private answer(
    budget: RateLimitBudget,
    limit: number,
    windowMs: number,
    decision: LeaseDecision,
    refusal: (headers: RateLimitHeaders) => RateLimitedError,
  ): RateLimitHeaders {
    const policy = `${limit};w=${windowMs / 1000}`;
    this.metrics.rateLimit(budget, decision.granted);
    if (decision.granted) {
      return {
        'ratelimit-policy': policy,
        'ratelimit-limit': String(limit),
        'ratelimit-remaining': String(decision.remaining),
        'ratelimit-reset': String(decision.resetSeconds),
      };
    }
    const retryAfter = String(decision.retryAfterSeconds);
    throw refusal({
      'retry-after': retryAfter,
      'ratelimit-policy': policy,
      'ratelimit-limit': String(limit),
      'ratelimit-remaining': '0',
      'ratelimit-reset': retryAfter,
    });
  }

  /**
   * Runs an authentication for a client address. A request whose credentials are valid is judged by its own
   * budget only, whatever others behind the same address did (a fleet of workers behind one NAT shares it);
   * a request that fails to authenticate is counted against the address, and once the address is over its
   * failure budget it is answered 429 instead of 401 (without a database statement while the block lasts).
   */
  async authenticateFrom<T>(address: string, authenticate: () => T | Promise<T>): Promise<T> {
    try {
      return await authenticate();
    } catch (error) {
      if (error instanceof UnauthorizedError) {
        const refusal = this.blockedNow(address) ?? (await this.recordFailure(address));
        if (this.config.AUTH_FAILURE_LIMIT > 0) {
          this.metrics.rateLimit('auth_failure', refusal === undefined);
        }
        throw refusal ?? error;
      }
      throw error;
    }
  }

  /**
   * The 429 for a request from an address over its failure budget, as this instance last learnt it, when the
   * request's credentials are already known to fail (ApiKeyGuard refuses such requests before their route runs);
   * else undefined. Counted as the refusal authenticateFrom would have made.
   */
  refuseBlocked(address: string): AuthFailuresExceededError | undefined {
    if (this.blocked.size === 0) {
      return undefined;
    }
    const refusal = this.blockedNow(address);
    if (refusal) {
      this.metrics.rateLimit('auth_failure', false);
    }
    return refusal;
  }

  /** Whether some address is over its failure budget on this instance: nothing else is worth checking if not. */
  get blocking(): boolean {
    return this.blocked.size > 0;
  }

  /** The 429 for an address over its failure budget, as this instance last learnt it; else undefined. */
  private blockedNow(address: string): AuthFailuresExceededError | undefined {
    const until = this.blocked.get(address);
    if (until === undefined) {
      return undefined;
    }
    const now = Date.now();
    if (until <= now) {
      this.blocked.delete(address);
      return undefined;
    }
    return new AuthFailuresExceededError(secondsUntil(until, now));
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
