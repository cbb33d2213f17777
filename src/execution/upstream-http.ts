import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Agent, errors as undiciErrors } from 'undici';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import { AppConfig } from '../config/app-config.js';
import type { SerializedRequest } from './rest-request.js';

export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Why an upstream exchange produced no usable answer; `reset` is the only one worth retrying. */
export type UpstreamFailureKind = 'timeout' | 'connect_timeout' | 'refused' | 'dns' | 'reset' | 'too_large' | 'other';

/** Messages name the server's origin only: a path or query string may carry a credential. */
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * One pooled, keep-alive HTTP client (undici) for every upstream call. Each exchange is bounded in
 * time (connect, then the whole exchange) and in size: a response over the limit is refused while
 * it streams in, never buffered whole.
 */
@Injectable()
export class UpstreamHttp implements OnModuleDestroy {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;

  constructor(config: AppConfig) {
    this.timeoutMs = config.EXECUTION_TIMEOUT_MS;
    this.maxBytes = config.EXECUTION_MAX_RESPONSE_BYTES;
    this.agent = new Agent({
      connect: { timeout: config.EXECUTION_CONNECT_TIMEOUT_MS },
      // The whole-exchange timer below is the real bound; these only keep undici's own defaults out of the way.
      headersTimeout: config.EXECUTION_TIMEOUT_MS,
      bodyTimeout: config.EXECUTION_TIMEOUT_MS,
      keepAliveTimeout: 10_000,
      // undici counts the body as it streams in and closes the connection past the limit.
      maxResponseSize: config.EXECUTION_MAX_RESPONSE_BYTES,
    });
  }

  async onModuleDestroy(): Promise<void> {
    // The HTTP server has stopped by now (src/api-app.ts stopApiApp): a call still running belongs to a
    // request cut at SHUTDOWN_TIMEOUT_MS, and close() would wait for it up to EXECUTION_TIMEOUT_MS.
    await this.agent.destroy();
  }

  async exchange(request: SerializedRequest): Promise<UpstreamAnswer> {
    // An EventEmitter serves as undici's abort signal: same effect, and far cheaper than an AbortController per call.
    const abort = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.emit('abort');
    }, this.timeoutMs);
    try {
      const response = await this.agent.request({
        origin: request.origin,
        path: request.path,
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: abort,
      });
      // undici checks only the bytes received: a declared length over the limit is refused before any is read.
      const declared = Number(response.headers['content-length']);
      if (declared > this.maxBytes) {
        discard(response.body);
        throw this.tooLarge(request.origin);
      }
      const body = await readAll(response.body);
      return { status: response.statusCode, headers: response.headers, body };
    } catch (error) {
      throw timedOut ? this.timeout(request.origin) : this.describe(error, request.origin);
    } finally {
      clearTimeout(timer);
    }
  }

  private tooLarge(origin: string): UpstreamFailure {
    return new UpstreamFailure(
      'too_large',
      `The response of ${origin} is larger than the ${this.maxBytes}-byte limit (EXECUTION_MAX_RESPONSE_BYTES); ` +
        'it was refused unread',
    );
  }

  private timeout(origin: string): UpstreamFailure {
    return new UpstreamFailure(
      'timeout',
      `Timeout: ${origin} did not answer within ${this.timeoutMs} ms (EXECUTION_TIMEOUT_MS)`,
    );
  }

  private describe(error: unknown, origin: string): UpstreamFailure {
    if (error instanceof UpstreamFailure) {
      return error;
    }
    const code = (error as { code?: string }).code ?? '';
    if (error instanceof undiciErrors.ResponseExceededMaxSizeError || code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      return this.tooLarge(origin);
    }
    if (error instanceof undiciErrors.ConnectTimeoutError || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new UpstreamFailure('connect_timeout', `Connect timeout: could not connect to ${origin} in time`);
    }
    if (code === 'ECONNREFUSED') {
      return new UpstreamFailure('refused', `Connection refused by ${origin}`);
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return new UpstreamFailure('dns', `Cannot resolve the host of ${origin} (${code})`);
    }
    if (RESET_CODES.has(code)) {
      return new UpstreamFailure('reset', `The connection to ${origin} was closed before a complete answer (${code})`);
    }
    const reason = error instanceof Error ? error.message : String(error);
    return new UpstreamFailure('other', `The request to ${origin} failed: ${reason}${code ? ` (${code})` : ''}`);
  }
}

/**
 * The whole body (undici enforces maxResponseSize while it streams in). Not the body's `arrayBuffer()`: its
 * consume machinery cost about 3 µs per call more than these listeners in the 2026-11-26 profile of bench:execute.
 */
export function readAll(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    body.once('error', reject);
  });
}

/** Stops reading an answer and closes its connection; the abort error the stream then emits is expected. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}
