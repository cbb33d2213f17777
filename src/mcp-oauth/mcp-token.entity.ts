import { Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { OwnerIdColumn } from '../linked-accounts/owner-id.js';
import { ProjectOwnedRow } from '../projects/project-owned-row.js';

/** What an MCP token's secret starts with (a bearer secret, see libs/common). */
export const MCP_TOKEN_PREFIX = 'pbm_';
/** How long an MCP token lasts when its creator names no lifetime, and a grant of the authorization server. */
export const TOKEN_TTL_DEFAULT_S = 30 * 24 * 3600;

/**
 * The row of an MCP token, made by the tokens API (/v1/mcp/tokens) or by a sign-in at the authorization
 * server, and checked by the MCP transport. An owner-scoped MCP token: acts for one project and one linked-account owner (and optionally only
 * some apps), whatever the request says. Only a SHA-256 of the token is stored; it is shown once.
 */
@Entity('mcp_tokens')
@Index(['project_id'])
export class McpTokenEntity extends ProjectOwnedRow {
  @OwnerIdColumn()
  linked_account_owner_id: string;

  /** Apps the token may reach; null for every app the project configured. */
  @Column({ type: 'text', array: true, nullable: true })
  apps: string[] | null;

  @Index({ unique: true })
  @Column('text')
  token_hash: string;

  @Column('timestamptz')
  expires_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  revoked_at: Date | null;

  /** For a token an MCP client got by signing the user in (OAuth): the client's id and registered name. */
  @Column({ type: 'text', nullable: true })
  client_id: string | null;

  @Column({ type: 'text', nullable: true })
  client_name: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
