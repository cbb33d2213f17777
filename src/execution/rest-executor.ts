import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { RunOutcome } from './execution.errors.js';
import type { SerializedRequest } from './rest-request.js';
import { type UpstreamAnswer, UpstreamFailure, UpstreamHttp } from './upstream-http.js';

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** Enough of an error body to read what went wrong, not enough to flood the caller. */
const MAX_ERROR_BODY_CHARS = 4000;

/**
 * Sends a REST function's request and maps the answer to an execution result. Idempotent methods
 * are retried on 429/502/503/504 and connection resets, honouring Retry-After, within a budget of
 * retries and of total waiting; other methods are sent exactly once.
 *
 * Not undici's RetryAgent / retry interceptor (undici 7): it has no budget of total waiting across attempts
 * (`maxTimeout` caps each wait, and shortens a longer Retry-After where this stops and hands back the answer),
 * and the per-attempt whole-exchange timeout of UpstreamHttp would sit outside it, bounding all attempts at once.
 */
@Injectable()
export class RestExecutor {
  private readonly maxRetries: number;
  private readonly baseDelayMs: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly http: UpstreamHttp,
    config: AppConfig,
  ) {
    this.maxRetries = config.EXECUTION_MAX_RETRIES;
    this.baseDelayMs = config.EXECUTION_RETRY_BASE_DELAY_MS;
    this.maxWaitMs = config.EXECUTION_RETRY_MAX_WAIT_MS;
  }

  async execute(request: SerializedRequest): Promise<RunOutcome> {
    const retries = IDEMPOTENT.has(request.method) ? this.maxRetries : 0;
    let waited = 0;
    for (let attempt = 0; ; attempt += 1) {
      let answer: UpstreamAnswer;
      try {
        answer = await this.http.exchange(request);
      } catch (error) {
        const failure =
          error instanceof UpstreamFailure ? error : new UpstreamFailure('other', 'The upstream request failed');
        const delay = attempt < retries && failure.kind === 'reset' ? this.backoff(attempt) : undefined;
        if (delay !== undefined && waited + delay <= this.maxWaitMs) {
          waited += delay;
          await sleep(delay);
          continue;
        }
        return { success: false, data: null, error: failure.message, upstreamStatus: null };
      }
      if (attempt < retries && RETRY_STATUSES.has(answer.status)) {
        const delay = retryAfterMs(answer.headers['retry-after']) ?? this.backoff(attempt);
        if (waited + delay <= this.maxWaitMs) {
          waited += delay;
          await sleep(delay);
          continue;
        }
      }
      return toOutcome(answer);
    }
  }

  /** Exponential backoff with full jitter between half and all of the step. */
  private backoff(attempt: number): number {
    const step = this.baseDelayMs * 2 ** attempt;
    return Math.round(step / 2 + Math.random() * (step / 2));
  }
}

/** 2xx → the parsed JSON (text when not JSON, `{}` when empty); otherwise the status and the body. */
export function toOutcome(answer: UpstreamAnswer): RunOutcome {
  const text = answer.body.toString('utf8');
  const parsed = parseBody(text);
  if (answer.status >= 200 && answer.status < 300) {
    return { success: true, data: parsed.value, error: null, upstreamStatus: answer.status };
  }
  let shown = parsed.json ? JSON.stringify(parsed.value) : text;
  if (shown.length > MAX_ERROR_BODY_CHARS) {
    shown = `${shown.slice(0, MAX_ERROR_BODY_CHARS)}… (${shown.length - MAX_ERROR_BODY_CHARS} more characters)`;
  }
  const error = shown
    ? `Upstream answered HTTP ${answer.status}: ${shown}`
    : `Upstream answered HTTP ${answer.status} with an empty body`;
  return { success: false, data: null, error, upstreamStatus: answer.status };
}

function parseBody(text: string): { value: unknown; json: boolean } {
  if (text === '') {
    return { value: {}, json: false };
  }
  try {
    return { value: JSON.parse(text) as unknown, json: true };
  } catch {
    return { value: text.trim() === '' ? {} : text, json: false };
  }
}

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) {
    return undefined;
  }
  if (/^\s*\d+\s*$/.test(value)) {
    return Number(value) * 1000;
  }
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
