import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';

/**
 * What the project's authorization server (oidc-provider) keeps: clients registered by DCR,
 * sessions, interactions, grants, authorization codes, access and refresh tokens. The record's id
 * is stored only as a SHA-256 (token values are their ids), so the table holds no usable token.
 */
@Entity('mcp_oauth_records')
@Index(['project_id', 'grant_id'])
export class McpOAuthRecordEntity {
  @PrimaryColumn('uuid')
  project_id: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<ProjectEntity>;

  /** oidc-provider's model name: Client, Session, Interaction, Grant, AuthorizationCode, AccessToken… */
  @PrimaryColumn('varchar', { length: 64 })
  model: string;

  /** SHA-256 (base64url) of the record's id. */
  @PrimaryColumn('text')
  id_hash: string;

  @Column('jsonb')
  payload: Record<string, unknown>;

  @Column('text', { nullable: true })
  grant_id: string | null;

  /** A session's uid (oidc-provider finds sessions by it). */
  @Column('text', { nullable: true })
  uid: string | null;

  @Index()
  @Column('timestamptz', { nullable: true })
  expires_at: Date | null;

  @Column('timestamptz', { nullable: true })
  consumed_at: Date | null;
}
