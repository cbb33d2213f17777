import { isUtf8 } from 'node:buffer';
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

/**
 * 2xx → `data` (see responseData); otherwise the status and the body, shown as text (a binary body by its
 * size and media type only).
 */
export function toOutcome(answer: UpstreamAnswer): RunOutcome {
  const data = responseData(answer);
  if (answer.status >= 200 && answer.status < 300) {
    return { success: true, data: data.value, error: null, upstreamStatus: answer.status };
  }
  let shown = data.kind === 'json' ? JSON.stringify(data.value) : data.kind === 'text' ? (data.value as string) : '';
  if (shown.length > MAX_ERROR_BODY_CHARS) {
    shown = `${shown.slice(0, MAX_ERROR_BODY_CHARS)}… (${shown.length - MAX_ERROR_BODY_CHARS} more characters)`;
  }
  let error: string;
  if (data.kind === 'binary') {
    const file = data.value as BinaryData;
    error = `Upstream answered HTTP ${answer.status} with a ${file.size_bytes}-byte ${file.media_type} body (binary, not shown)`;
  } else {
    error = shown
      ? `Upstream answered HTTP ${answer.status}: ${shown}`
      : `Upstream answered HTTP ${answer.status} with an empty body`;
  }
  return { success: false, data: null, error, upstreamStatus: answer.status };
}

/** A binary answer in `data`: its bytes in base64, with their media type and count. */
export interface BinaryData {
  media_type: string;
  size_bytes: number;
  base64: string;
}

/** How an answer's body was read into `data`. */
export interface ResponseData {
  kind: 'json' | 'text' | 'binary' | 'empty';
  value: unknown;
}

const JSON_TYPE = /^application\/([^;]*\+)?json\b/;
const TEXT_TYPE =
  /^(text\/|application\/([^;]*\+)?(xml|yaml|x-yaml|javascript|x-javascript|ecmascript|x-ndjson|csv|sql|graphql|jwt|x-www-form-urlencoded)\b|image\/svg\+xml)/;

/**
 * The body of an answer as `data`, one rule for every function:
 * - empty (or only white space) → `{}`;
 * - JSON → the parsed value, whatever the label (APIs often send JSON as `text/plain` or `text/html`);
 * - otherwise text when the Content-Type says text (JSON, `text/*`, XML, YAML, CSV…; decoded with its charset), or
 *   when there is none and the bytes are UTF-8;
 * - anything else (an image, a PDF, `application/octet-stream`, bytes that are not UTF-8 without a
 *   Content-Type) → `{ media_type, size_bytes, base64 }`. The body was read within
 *   EXECUTION_MAX_RESPONSE_BYTES, which counts the bytes received, not their base64.
 */
export function responseData(answer: UpstreamAnswer): ResponseData {
  const body = answer.body;
  if (body.length === 0) {
    return { kind: 'empty', value: {} };
  }
  const header = answer.headers['content-type'];
  const contentType = (Array.isArray(header) ? header[0] : header) ?? '';
  const mediaType = contentType.split(';', 1)[0].trim().toLowerCase();
  const textual = mediaType !== '' && (JSON_TYPE.test(mediaType) || TEXT_TYPE.test(mediaType));
  if (!textual && !isUtf8(body)) {
    return { kind: 'binary', value: binaryData(mediaType || 'application/octet-stream', body) };
  }
  const text = textual ? decodeText(body, contentType) : body.toString('utf8');
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    if (text.trim() === '') {
      return { kind: 'empty', value: {} };
    }
    // A label that says neither JSON nor text keeps its bytes, even when they happen to be UTF-8.
    return textual || mediaType === ''
      ? { kind: 'text', value: text }
      : { kind: 'binary', value: binaryData(mediaType, body) };
  }
}

function binaryData(mediaType: string, body: Buffer): BinaryData {
  return { media_type: mediaType, size_bytes: body.length, base64: body.toString('base64') };
}

/** Text in the charset its Content-Type names; UTF-8 when it names none, or one this runtime does not know. */
function decodeText(body: Buffer, contentType: string): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1].toLowerCase();
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') {
    return body.toString('utf8');
  }
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return body.toString('utf8');
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
