import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';

/**
 * One function execution, kept so that operators can answer "what did this agent do". Inputs and
 * credentials are never stored; `error` is the failure message already returned to the caller.
 */
@Entity('executions')
@Index(['project_id', 'created_at'])
export class ExecutionEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid')
  project_id: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<ProjectEntity>;

  @Column('text')
  app_name: string;

  @Column('text')
  function_name: string;

  @Column('varchar', { length: 255 })
  linked_account_owner_id: string;

  @Column('boolean')
  success: boolean;

  /** HTTP status of the last upstream answer; null for connectors and when no answer came. */
  @Column({ type: 'integer', nullable: true })
  upstream_status: number | null;

  @Column('integer')
  duration_ms: number;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** When the execution started, set by the service (rows are written in batches, later). */
  @Column('timestamptz')
  created_at: Date;
}
