import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { AppEntity } from '../apps/app.entity.js';
import { ProjectEntity } from '../projects/project.entity.js';
import { OwnerIdColumn } from '../linked-accounts/owner-id.js';

/**
 * One OAuth 2.0 linking flow between its start and its callback. Only the `state` value travels
 * through the browser; everything it stands for is kept here, so that any instance sharing the
 * database can finish the flow. The row is deleted when the callback consumes it (once).
 */
@Entity('oauth2_states')
export class OAuth2StateEntity {
  /** SHA-256 (hex) of the state: a database reader cannot complete someone else's flow. */
  @PrimaryColumn('text')
  state_hash: string;

  @Column('uuid')
  project_id: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<ProjectEntity>;

  @Column('text')
  app_name: string;

  @ManyToOne(() => AppEntity, { onDelete: 'CASCADE', onUpdate: 'CASCADE' })
  @JoinColumn({ name: 'app_name' })
  app?: Relation<AppEntity>;

  @OwnerIdColumn()
  linked_account_owner_id: string;

  /** The client the authorization code is issued to; the callback refuses when the configuration changed it. */
  @Column('text')
  client_id: string;

  /** PKCE code verifier, sealed (AES-256-GCM). */
  @Column('text')
  code_verifier: string;

  /** The redirect_uri sent to the provider; the token request must repeat it exactly. */
  @Column('text')
  redirect_uri: string;

  /** Scopes requested, kept as the granted ones when the token response does not name them. */
  @Column({ type: 'text', nullable: true })
  scope: string | null;

  /** Where the browser goes after the callback (an allowed origin, checked at start). */
  @Column({ type: 'text', nullable: true })
  after_redirect_url: string | null;

  @Index()
  @Column('timestamptz')
  expires_at: Date;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
