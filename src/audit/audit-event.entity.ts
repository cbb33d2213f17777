import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { ActorType } from './actor.js';

/**
 * One administrative change (src/audit): who, what, when, and allow-listed snapshots of the resource
 * before and after — never a secret. Rows are only ever inserted. No foreign key to the project: the
 * record outlives what it describes.
 */
@Entity('audit_events')
@Index('IDX_audit_events_project_time', ['project_id', 'created_at'])
@Index('IDX_audit_events_project_resource', ['project_id', 'resource_type', 'resource_id'])
// AUDIT_RETENTION_DAYS deletes by age alone.
@Index('IDX_audit_events_time', ['created_at'])
export class AuditEventEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** Null for changes of the shared catalogue (imports, remote MCP servers). */
  @Column({ type: 'uuid', nullable: true })
  project_id: string | null;

  @Column('varchar', { length: 16 })
  actor_type: ActorType;

  @Column({ type: 'text', nullable: true })
  actor_id: string | null;

  /** `<resource_type>.<verb>`, e.g. `app_configuration.created`. */
  @Column('varchar', { length: 64 })
  action: string;

  @Column('varchar', { length: 64 })
  resource_type: string;

  @Column({ type: 'text', nullable: true })
  resource_id: string | null;

  @Column({ type: 'jsonb', nullable: true })
  before: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true })
  after: Record<string, unknown> | null;

  /** clock_timestamp(), not now(): several records of one transaction keep their order. */
  @Column({ type: 'timestamptz', default: () => 'clock_timestamp()' })
  created_at: Date;
}
