import { Injectable } from '@nestjs/common';
import { SecretBox } from '../../libs/common/src/index.js';
import type { Actor } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { type SealedColumn, SealedColumnsRepository } from './sealed-columns.repository.js';
import { ChangeNotifications } from '../database/change-notifications.js';

export interface RotationColumnReport {
  column: string;
  /** Values re-sealed under the newest key by this run. */
  resealed: number;
  /** Values changed by someone else between this run's read and write (left as they were). */
  changed_concurrently: number;
  /** Values no key of the ring opens (the row is left as it is). */
  unreadable: number;
  /** Values still not under the newest key when this run finished. */
  remaining: number;
}

export interface RotationReport {
  key_id: string;
  columns: RotationColumnReport[];
  resealed: number;
  remaining: number;
  unreadable: number;
}

/**
 * `patchbay secrets rotate`: re-seals every stored secret under the newest key of the ring, in batches,
 * each batch its own transaction. Resumable (values already under the newest key are skipped) and safe
 * while the service runs: each write applies only if the value is still the one read.
 */
@Injectable()
export class SecretsRotationService {
  constructor(
    private readonly secretBox: SecretBox,
    private readonly repository: SealedColumnsRepository,
    private readonly changes: ChangeNotifications,
    private readonly audit: AuditService,
  ) {}

  /** `actor`: who asked (the command line); the run is recorded in the audit log with its counts, never a key. */
  async rotate(actor: Actor, options: { batchSize?: number } = {}): Promise<RotationReport> {
    const batchSize = options.batchSize ?? 100;
    const prefix = `v2.${this.secretBox.currentKeyId}.`;
    const columns: RotationColumnReport[] = [];
    for (const column of this.repository.columns) {
      columns.push(await this.rotateColumn(column, prefix, batchSize));
    }
    const total = (field: 'resealed' | 'remaining' | 'unreadable') =>
      columns.reduce((sum, column) => sum + column[field], 0);
    if (total('resealed') > 0) {
      // Cached rows hold the old sealed text, which a ring without the old key cannot open.
      await this.changes.publish('functions');
      await this.changes.publish('app_configurations');
      await this.changes.publish('linked_accounts');
    }
    const report = {
      key_id: this.secretBox.currentKeyId,
      columns,
      resealed: total('resealed'),
      remaining: total('remaining'),
      unreadable: total('unreadable'),
    };
    // Every project's secrets: recorded with no project, after the batches (each its own transaction).
    await this.audit.record({
      projectId: null,
      actor,
      action: 'sealing_key.rotated',
      resourceId: report.key_id,
      after: {
        ...report,
        changed_concurrently: columns.reduce((sum, column) => sum + column.changed_concurrently, 0),
      },
    });
    return report;
  }

  private async rotateColumn(column: SealedColumn, prefix: string, batchSize: number): Promise<RotationColumnReport> {
    const report: RotationColumnReport = {
      column: column.name,
      resealed: 0,
      changed_concurrently: 0,
      unreadable: 0,
      remaining: 0,
    };
    let after: string | undefined;
    for (;;) {
      const rows = await this.repository.rowsToReseal(column, prefix, after, batchSize);
      if (rows.length === 0) {
        break;
      }
      after = rows[rows.length - 1].key;
      const updates: { key: string; from: string; to: string }[] = [];
      for (const row of rows) {
        try {
          updates.push({ key: row.key, from: row.sealed, to: this.secretBox.seal(this.secretBox.open(row.sealed)) });
        } catch {
          report.unreadable += 1;
        }
      }
      const written = await this.repository.compareAndSet(column, updates);
      report.resealed += written;
      report.changed_concurrently += updates.length - written;
    }
    report.remaining = await this.repository.countNotUnder(column, prefix);
    return report;
  }
}
