import { randomFillSync } from 'node:crypto';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { isDatabaseConnectionError } from '../../libs/common/src/index.js';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../observability/metrics.js';
import { ExecutionLogBatch, type ExecutionRecord } from './execution-log.batch.js';
import { ExecutionRepository } from './execution.repository.js';

/** Ids whose random bytes are drawn from the system at once (see idRandomBytes). */
const IDS_PER_DRAW = 256;
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

/**
 * The 16 random bytes of the next log id, from a pool refilled 4 KiB at a time (as Node's own
 * crypto.randomUUID does). uuid's default source calls crypto.getRandomValues for every id, which costs
 * about 14 µs on Node 20 here against under 1 µs from the pool: 4 % of an execution's CPU in
 * `npm run bench:execute`.
 */
function idRandomBytes(): Uint8Array {
  if (randomOffset + 16 > randomPool.length) {
    randomPool = randomFillSync(Buffer.allocUnsafe(16 * IDS_PER_DRAW));
    randomOffset = 0;
  }
  const bytes = randomPool.subarray(randomOffset, randomOffset + 16);
  randomOffset += 16;
  return bytes;
}

/**
 * Write at once when this many rows wait, whatever the timer says. Each statement costs the embedded database
 * about 0.7 ms of its own besides the rows; at 10,000 executions a second, 5,000 against 500 rows a batch gave
 * 0.598 against 0.576 of the bare proxy's throughput in `npm run bench:execute` (embedded, 8 rounds side by side).
 */
const BATCH_SIZE = 5_000;
/** Beyond this many unwritten rows (the database is away), new rows are dropped and counted. */
const MAX_PENDING = 50_000;
/** While the database is away, how often the batches it could not take are tried again. */
const RETRY_MS = 1_000;

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
  /** Batches refused because the database could not be reached, oldest first: written before anything newer. */
  private undelivered: ExecutionLogBatch[] = [];
  /** Rows recorded and not yet written or given up on: the buffered batch and the batches queued behind a write. */
  private unwritten = 0;

  constructor(
    private readonly repository: ExecutionRepository,
    private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    metrics.gauge(
      'patchbay_execution_log_buffered_rows',
      'Execution-log rows recorded and not yet written',
      () => this.unwritten,
    );
  }

  /**
   * Queues one execution; its id is given here, a version-7 UUID of its start time. Log rows are inserted in id
   * order, so the primary-key index grows at its right edge instead of taking random page writes, which halves
   * the cost of writing the log on the embedded database.
   */
  record(execution: ExecutionRecord): void {
    if (this.unwritten >= MAX_PENDING) {
      this.dropped += 1;
      return;
    }
    this.pending.add(uuidv7({ msecs: execution.started_at_ms, random: idRandomBytes() }), execution);
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
    this.writing = this.writing.then(async () => {
      const waiting = this.undelivered;
      this.undelivered = [];
      for (const earlier of waiting) {
        await this.write(earlier);
      }
      await this.write(batch);
      if (this.undelivered.length > 0 && !this.timer) {
        this.timer = setTimeout(() => void this.flush(), RETRY_MS);
        this.timer.unref();
      }
    });
    return this.writing;
  }

  async onModuleDestroy(): Promise<void> {
    await this.flush();
    clearTimeout(this.timer);
    const lost = this.undelivered.reduce((rows, batch) => rows + batch.size, 0);
    if (lost > 0) {
      this.logger.warn(`${lost} execution log row(s) are not written: the database did not answer before the stop`);
    }
  }

  private async write(batch: ExecutionLogBatch): Promise<void> {
    if (this.dropped > 0) {
      this.logger.warn(`${this.dropped} execution log row(s) were dropped while the database was not writable`);
      this.dropped = 0;
    }
    if (batch.size === 0) {
      return;
    }
    if (this.undelivered.length > 0) {
      // The database was away a moment ago: keep the order, try again with the next retry.
      this.undelivered.push(batch);
      return;
    }
    try {
      await this.repository.insertExecutions(batch);
    } catch (error) {
      if (isDatabaseConnectionError(error)) {
        // Kept (within MAX_PENDING) and written once the database is back.
        this.undelivered.push(batch);
        return;
      }
      // A row the database refuses must not lose the others.
      await this.writeOneByOne(batch);
    }
    this.unwritten -= batch.size;
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
