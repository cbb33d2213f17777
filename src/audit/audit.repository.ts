import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager, QueryDeepPartialEntity } from 'typeorm';
import { newestFirst } from '../database/newest-first.js';
import type { ActorType } from './actor.js';
import { AuditEventEntity } from './audit-event.entity.js';

export type NewAuditEvent = Omit<AuditEventEntity, 'created_at'>;

export interface AuditEventFilter {
  action?: string;
  resourceType?: string;
  resourceId?: string;
  actorType?: ActorType;
  actorId?: string;
  since?: Date;
  until?: Date;
  limit: number;
  offset: number;
}

/** Queries over the audit log: inserts (in the caller's transaction when given) and one project's listing. */
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(event: NewAuditEvent, manager: EntityManager = this.dataSource.manager): Promise<void> {
    // TypeORM's deep-partial type cannot express jsonb `unknown` values; the row is complete.
    await manager.insert(AuditEventEntity, event as QueryDeepPartialEntity<AuditEventEntity>);
  }

  /**
   * Deletes at most `limit` records made before `cutoff`, oldest first; the number deleted. Rows another
   * instance is deleting at the same moment are skipped (SKIP LOCKED), so instances pruning together neither
   * wait for each other nor delete a row twice.
   */
  async deleteOlderThan(cutoff: Date, limit: number): Promise<number> {
    const result = await this.dataSource
      .createQueryBuilder()
      .delete()
      .from(AuditEventEntity)
      .where(
        `id IN (SELECT id FROM audit_events WHERE created_at < :cutoff ORDER BY created_at LIMIT :limit FOR UPDATE SKIP LOCKED)`,
        { cutoff, limit },
      )
      .execute();
    return result.affected ?? 0;
  }

  /** Newest first; ties (one transaction's records) in the order they were written, newest first too. */
  listForProject(projectId: string, filter: AuditEventFilter): Promise<AuditEventEntity[]> {
    return newestFirst(this.dataSource.getRepository(AuditEventEntity), projectId, {
      equal: {
        action: filter.action,
        resource_type: filter.resourceType,
        resource_id: filter.resourceId,
        actor_type: filter.actorType,
        actor_id: filter.actorId,
      },
      since: filter.since,
      until: filter.until,
      offset: filter.offset,
      limit: filter.limit,
    });
  }
}
