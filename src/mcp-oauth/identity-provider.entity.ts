import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  OneToOne,
  PrimaryColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';

/**
 * The OpenID Connect provider a project's end users sign in with when an MCP client adds the
 * project's MCP address by OAuth. One per project; without it the project's address answers no
 * OAuth metadata and takes API keys and owner-scoped tokens only.
 */
@Entity('mcp_identity_providers')
export class McpIdentityProviderEntity {
  @PrimaryColumn('uuid')
  project_id: string;

  @OneToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<ProjectEntity>;

  @Column('text')
  issuer: string;

  @Column('text')
  client_id: string;

  /** Sealed with the secrets key (SecretBox). */
  @Column('text')
  client_secret: string;

  /** Space-separated; always includes `openid`. */
  @Column('text')
  scopes: string;

  /** The ID-token or userinfo claim whose value becomes the linked_account_owner_id. */
  @Column('varchar', { length: 255 })
  owner_claim: string;

  /** The authorization server's signing and cookie keys (JSON), sealed; made when the provider is first set. */
  @Column('text')
  server_keys: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
