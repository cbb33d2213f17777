import type { Readable } from 'node:stream';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Agent, type Dispatcher, errors as undiciErrors } from 'undici';
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

  /**
   * One exchange through undici's dispatch API, the answer collected by the handler below. Not `agent.request`:
   * it wraps every answer in a Readable stream, an AsyncResource and the listeners that read them, which cost
   * 20 µs of CPU per call (157 against 136 µs per proxied request, medians of five rounds side by side at
   * concurrency 64 on the 2-core machine, 2026-11-29, a bare node:http proxy calling one upstream either way).
   */
  exchange(request: SerializedRequest): Promise<UpstreamAnswer> {
    return new Promise((resolve, reject) => {
      const handler = new AnswerCollector(request.origin, this, resolve, reject);
      handler.timer = setTimeout(() => handler.fail(this.timeout(request.origin)), this.timeoutMs);
      this.agent.dispatch(
        {
          origin: request.origin,
          path: request.path,
          method: request.method,
          headers: request.headers,
          body: request.body,
        },
        handler,
      );
    });
  }

  /** The answer's declared length is over the limit: it is refused before any byte of it is read. */
  refusesLength(headers: IncomingHttpHeaders): boolean {
    return Number(headers['content-length']) > this.maxBytes;
  }

  tooLarge(origin: string): UpstreamFailure {
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

  /** What undici's error means for the exchange (AnswerCollector's errors). */
  describe(error: unknown, origin: string): UpstreamFailure {
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
 * Collects one answer for UpstreamHttp.exchange: the status and headers, then the body's chunks (undici enforces
 * maxResponseSize while they arrive). The exchange settles once: by the answer's end, by undici's error, or by the
 * whole-exchange timer or a declared length over the limit, which also abort the request (closing its connection).
 */
class AnswerCollector implements Dispatcher.DispatchHandler {
  /** The whole-exchange timer (EXECUTION_TIMEOUT_MS), set by exchange. */
  timer?: NodeJS.Timeout;
  private controller?: Dispatcher.DispatchController;
  /** Why the exchange was given up before undici was done with it; the request is aborted as soon as it can be. */
  private abandoned?: UpstreamFailure;
  private settled = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly origin: string,
    private readonly http: UpstreamHttp,
    private readonly resolve: (answer: UpstreamAnswer) => void,
    private readonly reject: (failure: UpstreamFailure) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abandoned) {
      controller.abort(this.abandoned);
    }
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (this.http.refusesLength(headers)) {
      this.fail(this.http.tooLarge(this.origin));
      return;
    }
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  onResponseEnd(): void {
    if (this.settle()) {
      const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
      this.resolve({ status: this.status, headers: this.headers, body });
    }
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settle()) {
      this.reject(this.http.describe(error, this.origin));
    }
  }

  /** Gives the exchange up with `failure` and aborts the request (at once, or when undici starts it). */
  fail(failure: UpstreamFailure): void {
    if (!this.settle()) {
      return;
    }
    this.abandoned = failure;
    this.controller?.abort(failure);
    this.reject(failure);
  }

  /** True the first time only: the exchange settles once. */
  private settle(): boolean {
    if (this.settled) {
      return false;
    }
    this.settled = true;
    clearTimeout(this.timer);
    return true;
  }
}

/**
 * The whole body of a streamed answer (undici enforces maxResponseSize while it streams in); dispatcher-fetch.ts's.
 * Not the body's `arrayBuffer()`: its consume machinery cost about 3 µs per call more than these listeners in the
 * 2026-11-26 profile of bench:execute.
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
