import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { AppEntity } from '../apps/app.entity.js';
import { OwnerIdColumn } from '../linked-accounts/owner-id.js';
import { ProjectOwnedRow } from '../projects/project-owned-row.js';

/** Stored states; `expired` is never stored: a pending link past its `expires_at` reads as expired. */
export const STORED_CONNECT_LINK_STATUSES = ['pending', 'completed', 'revoked'] as const;
export type StoredConnectLinkStatus = (typeof STORED_CONNECT_LINK_STATUSES)[number];

/**
 * A link a developer hands to an end user so that the user links their own account on Patchbay's
 * page. Only the hash of its single-use token is kept: the token itself travels in the URL once,
 * then in an HttpOnly cookie.
 */
@Entity('connect_links')
@Index(['project_id'])
export class ConnectLinkEntity extends ProjectOwnedRow {
  @Column('text')
  app_name: string;

  @ManyToOne(() => AppEntity, { onDelete: 'CASCADE', onUpdate: 'CASCADE' })
  @JoinColumn({ name: 'app_name' })
  app?: Relation<AppEntity>;

  @OwnerIdColumn()
  linked_account_owner_id: string;

  /** How the page names the end user, when the developer gave it (the owner id is never shown then). */
  @Column({ type: 'varchar', length: 255, nullable: true })
  owner_display_name: string | null;

  /** SHA-256 (hex) of the link's token. */
  @Index({ unique: true })
  @Column('text')
  token_hash: string;

  @Column('text')
  status: StoredConnectLinkStatus;

  @Column({ type: 'uuid', nullable: true })
  linked_account_id: string | null;

  /** Where the browser goes after linking (an allowed origin, checked at creation). */
  @Column({ type: 'text', nullable: true })
  after_link_redirect_url: string | null;

  /** Where completion and failure events are POSTed (an allowed origin, checked at creation). */
  @Column({ type: 'text', nullable: true })
  webhook_url: string | null;

  /** The HMAC key of the webhook signatures, sealed (AES-256-GCM). */
  @Column({ type: 'text', nullable: true })
  webhook_secret: string | null;

  /** When the page last started an OAuth 2.0 flow: the account must have been linked after it. */
  @Column({ type: 'timestamptz', nullable: true })
  oauth2_started_at: Date | null;

  /** Fixed-window rate limit of the page's form posts. */
  @Column('integer', { default: 0 })
  post_count: number;

  @Column({ type: 'timestamptz', nullable: true })
  post_window_started_at: Date | null;

  @Column('timestamptz')
  expires_at: Date;

  @Column({ type: 'timestamptz', nullable: true })
  completed_at: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
