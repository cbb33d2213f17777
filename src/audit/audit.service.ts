import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { parseDateTime } from '../../libs/common/src/index.js';
import { ACTOR_TYPES, type Actor, type ActorType } from './actor.js';
import type { AuditEventEntity } from './audit-event.entity.js';
import { type AuditEventPublic, type AuditEventsQuery } from './audit.dto.js';
import { AuditRepository } from './audit.repository.js';
import { type AuditAction, changedFields, resourceTypeOf, snapshotOf } from './audited-resources.js';

/** One administrative change, as a service reports it: whole rows may be given, only allow-listed fields are kept. */
export interface AuditChange {
  projectId: string | null;
  actor: Actor;
  action: AuditAction;
  resourceId: string | null;
  before?: object | null;
  after?: object | null;
}

/**
 * The audit log's rules: every administrative change is recorded through `record`, which keeps only the
 * allow-listed fields of the resource (audited-resources.ts) and, for an update, only those that changed.
 */
@Injectable()
export class AuditService {
  constructor(private readonly events: AuditRepository) {}

  /**
   * Records one change. With `manager`, in the caller's transaction: the record and the change are
   * written together or not at all. Without, the caller records right after its change.
   */
  async record(change: AuditChange, manager?: EntityManager): Promise<void> {
    const resourceType = resourceTypeOf(change.action);
    let before = snapshotOf(resourceType, change.before);
    let after = snapshotOf(resourceType, change.after);
    if (before && after && change.action.endsWith('.updated')) {
      ({ before, after } = changedFields(before, after));
      // Nothing an auditor can see changed (a PATCH repeating the stored values): no record.
      if (Object.keys(before).length === 0 && Object.keys(after).length === 0) {
        return;
      }
    }
    await this.events.insert(
      {
        id: randomUUID(),
        project_id: change.projectId,
        actor_type: change.actor.type,
        actor_id: change.actor.id,
        action: change.action,
        resource_type: resourceType,
        resource_id: change.resourceId,
        before,
        after,
      },
      manager,
    );
  }

  async listAuditEvents(projectId: string, query: AuditEventsQuery): Promise<AuditEventPublic[]> {
    const byType = ACTOR_TYPES.includes(query.actor as ActorType);
    const rows = await this.events.listForProject(projectId, {
      action: query.action,
      resourceType: query.resource_type,
      resourceId: query.resource_id,
      actorType: byType ? (query.actor as ActorType) : undefined,
      actorId: byType ? undefined : query.actor?.toLowerCase(),
      since: query.since === undefined ? undefined : parseDateTime(query.since),
      until: query.until === undefined ? undefined : parseDateTime(query.until),
      limit: query.limit,
      offset: query.offset,
    });
    return rows.map(toPublic);
  }
}

function toPublic(row: AuditEventEntity): AuditEventPublic {
  return {
    id: row.id,
    // Listed per project: never null here.
    project_id: row.project_id ?? '',
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    action: row.action as AuditAction,
    resource_type: row.resource_type as AuditEventPublic['resource_type'],
    resource_id: row.resource_id,
    before: row.before,
    after: row.after,
    created_at: row.created_at.toISOString(),
  };
}
