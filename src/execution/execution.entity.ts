import { Column, Entity, PrimaryColumn } from 'typeorm';
import { OwnerIdColumn } from '../linked-accounts/owner-id.js';

/**
 * One function execution, kept so that operators can answer "what did this agent do". Inputs and
 * credentials are never stored; `error` is the failure message already returned to the caller.
 * Keyed by (project, start time, id), the order it is listed in; no foreign key: a row costs one
 * index update to write (see the ExecutionLogKey migration).
 */
@Entity('executions')
export class ExecutionEntity {
  @PrimaryColumn('uuid')
  project_id: string;

  /** When the execution started, set by the service (rows are written in batches, later). */
  @PrimaryColumn('timestamptz')
  created_at: Date;

  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  app_name: string;

  @Column('text')
  function_name: string;

  @OwnerIdColumn()
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

  /** Where the call came from: `rest` (POST /execute) or `mcp` (a tools/call). */
  @Column('text', { default: 'rest' })
  source: ExecutionSource;

  /** The owner-scoped MCP token the call was made with, if any. */
  @Column({ type: 'uuid', nullable: true })
  mcp_token_id: string | null;
}

export type ExecutionSource = 'rest' | 'mcp';
