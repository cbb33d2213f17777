import { Worker } from 'node:worker_threads';
import type { FunctionRecord } from '../catalog-files.js';
import type { MappedDocument, ReaderAnswer, ReaderRequest } from './openapi-document.worker.js';
import { OpenApiRefusal, type OpenApiMappingOptions } from './openapi-mapping.js';
import { unpackRecords } from './openapi-record-batches.js';

export interface OpenApiReaderLimits {
  /** A thread whose heap has grown past this after a document is replaced by a fresh one. */
  recycleHeapMb: number;
  /** The thread's old-generation limit: a document that needs more is refused. */
  maxHeapMb: number;
}

/**
 * The import's side of openapi-document.worker: one document at a time, `load`, `map`, then its
 * function records, on a worker thread that is replaced after documents that left its heap large (V8
 * keeps a grown heap), so the memory of the largest documents is given back and never adds up.
 */
export class OpenApiReader {
  private worker?: Worker;
  private waiting?: { resolve: (answer: ReaderAnswer) => void; reject: (error: Error) => void };
  /** How many threads were started (tests, measurements). */
  threads = 0;

  constructor(private readonly limits: OpenApiReaderLimits) {}

  /** Reads, validates and dereferences `file`; answers the app name its title gives. */
  async load(file: string, validate: boolean, appName?: string): Promise<string> {
    const answer = await this.request({ type: 'load', file, validate, appName });
    if (answer.type !== 'loaded') {
      throw new Error(`unexpected answer ${answer.type} to load`);
    }
    return answer.baseName;
  }

  /**
   * Maps the loaded document under `appName` and checks the records by the catalogue's rules; its
   * function records are then read with `functions`.
   */
  async map(
    appName: string,
    previousNames: ReadonlyMap<string, string>,
    options: Omit<OpenApiMappingOptions, 'previousNames' | 'appName'>,
    secrets: Record<string, string | undefined>,
  ): Promise<MappedDocument> {
    const answer = await this.request({ type: 'map', appName, previousNames: [...previousNames], options, secrets });
    if (answer.type !== 'mapped') {
      throw new Error(`unexpected answer ${answer.type} to map`);
    }
    return answer.mapped;
  }

  /**
   * The mapped document's function records, a batch at a time: the thread makes the next batch while
   * the caller writes this one. `handedOver` is called once the thread has handed over the last batch
   * (it may take the next document) before that batch is yielded. Ended early, by the caller or by a
   * failure, the thread is ended too, and the records it still held with it.
   */
  async *functions(handedOver: () => void = () => undefined): AsyncGenerator<FunctionRecord[]> {
    let pending: Promise<ReaderAnswer> | undefined = this.requestAhead({ type: 'functions' });
    try {
      while (pending) {
        const answer = await pending;
        pending = undefined;
        if (answer.type !== 'functions') {
          throw new Error(`unexpected answer ${answer.type} to functions`);
        }
        if (answer.last) {
          handedOver();
        } else {
          pending = this.requestAhead({ type: 'functions' });
        }
        yield unpackRecords(answer.batch);
      }
    } finally {
      if (pending) {
        await pending.catch(() => undefined);
        await this.close();
      }
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** A request whose answer is awaited later: its failure is not unhandled meanwhile. */
  private requestAhead(request: ReaderRequest): Promise<ReaderAnswer> {
    const answer = this.request(request);
    answer.catch(() => undefined);
    return answer;
  }

  private request(request: ReaderRequest): Promise<ReaderAnswer> {
    const worker = this.worker ?? this.start();
    return new Promise<ReaderAnswer>((resolve, reject) => {
      this.waiting = { resolve, reject };
      worker.postMessage(request);
    }).then(async (answer) => {
      // Once the thread holds no document (a refusal, a failure, the last records), it may be replaced.
      const holds =
        answer.type === 'loaded' || answer.type === 'mapped' || (answer.type === 'functions' && !answer.last);
      if (!holds && answer.heapMb > this.limits.recycleHeapMb) {
        await this.close();
      }
      if (answer.type === 'refused') {
        throw new OpenApiRefusal(answer.reason);
      }
      if (answer.type === 'failed') {
        throw new Error(answer.message);
      }
      return answer;
    });
  }

  private start(): Worker {
    const worker = new Worker(workerScript(), { resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb } });
    this.threads += 1;
    worker.on('message', (answer: ReaderAnswer) => {
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.resolve(answer);
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (this.worker === worker) {
        this.worker = undefined;
      }
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new OpenApiRefusal(`needs more than ${this.limits.maxHeapMb} MB of memory to read`)
          : error,
      );
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) {
        this.worker = undefined;
      }
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(new Error(`the OpenAPI reader thread ended (exit code ${code})`));
    });
    this.worker = worker;
    return worker;
  }
}

/**
 * The compiled worker next to this module. Under the test runner this module is TypeScript, which
 * a worker thread cannot load: the build's copy (the test setup builds first) serves.
 */
function workerScript(): URL {
  const here = new URL('./openapi-document.worker.js', import.meta.url);
  if (!import.meta.url.endsWith('.ts')) {
    return here;
  }
  return new URL(here.href.replace(/\/src\/catalog\/openapi\/([^/]+)$/, '/dist/src/catalog/openapi/$1'));
}
