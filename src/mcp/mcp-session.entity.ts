import { Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { ProjectOwnedRow } from '../projects/project-owned-row.js';

/**
 * An MCP session: what its `initialize` negotiated. Kept in the database, not in one instance's
 * memory, so that every instance behind a load balancer can serve every request of the session
 * (SDK 1.32 learns a client's capabilities only from `initialize`).
 */
@Entity('mcp_sessions')
export class McpSessionEntity extends ProjectOwnedRow {
  /** The token that opened the session; a request of the session must come with the same one. */
  @Column({ type: 'uuid', nullable: true })
  mcp_token_id: string | null;

  @Column('text')
  protocol_version: string;

  /** The client's `capabilities` from `initialize` (elicitation modes decide how a link is offered). */
  @Column('jsonb')
  client_capabilities: Record<string, unknown>;

  /** Sessions end SESSION_TTL after they began (the client then initialises again). */
  @Index()
  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
