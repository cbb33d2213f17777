import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '../config/app-config.js';
import { AuditRepository } from './audit.repository.js';

const FIRST_PRUNE_MS = 60_000;
const PRUNE_INTERVAL_MS = 3_600_000;
/** Rows per DELETE: a backlog is deleted in statements short enough not to hold locks for long. */
const PRUNE_BATCH = 5_000;

/**
 * AUDIT_RETENTION_DAYS: records older than that are deleted, a minute after the HTTP service starts and then
 * hourly. Off (records kept for ever) when unset. Every instance may prune: the DELETE is idempotent and
 * instances pruning together skip each other's rows.
 */
@Injectable()
export class AuditRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Audit');
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly events: AuditRepository,
    private readonly config: AppConfig,
    private readonly http: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    if (this.http.httpAdapter && this.config.AUDIT_RETENTION_DAYS !== undefined) {
      const run = () =>
        void this.prune().catch((error: unknown) => this.logger.warn(`Audit pruning failed: ${String(error)}`));
      this.timer = setTimeout(() => {
        run();
        this.timer = setInterval(run, PRUNE_INTERVAL_MS).unref();
      }, FIRST_PRUNE_MS).unref();
    }
  }

  onModuleDestroy(): void {
    // One timer at a time: the first timeout, then the interval (clearTimeout clears either).
    clearTimeout(this.timer);
  }

  /** Deletes the records older than AUDIT_RETENTION_DAYS; the number deleted (0 when retention is off). */
  async prune(): Promise<number> {
    const days = this.config.AUDIT_RETENTION_DAYS;
    if (days === undefined || this.running) {
      return 0;
    }
    this.running = true;
    try {
      const cutoff = new Date(Date.now() - days * 86_400_000);
      let deleted = 0;
      for (;;) {
        const batch = await this.events.deleteOlderThan(cutoff, PRUNE_BATCH);
        deleted += batch;
        if (batch < PRUNE_BATCH) {
          break;
        }
      }
      if (deleted > 0) {
        this.logger.log(`Deleted ${deleted} audit record(s) older than ${days} day(s)`);
      }
      return deleted;
    } finally {
      this.running = false;
    }
  }
}
