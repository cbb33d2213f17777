import { AppUseRow } from '../apps/app-use-row.js';
import { Column, CreateDateColumn, Entity, Index, UpdateDateColumn } from 'typeorm';
import type { SecurityScheme } from '../apps/security-scheme.js';
import { OwnerIdColumn } from './owner-id.js';

@Entity('linked_accounts')
@Index(['project_id', 'app_name', 'linked_account_owner_id'], { unique: true })
export class LinkedAccountEntity extends AppUseRow {
  @OwnerIdColumn()
  linked_account_owner_id: string;

  @Column('text')
  security_scheme: SecurityScheme;

  /** Sealed (AES-256-GCM) JSON of the credentials; never leaves the service. */
  @Column('text')
  credentials: string;

  @Column('boolean')
  enabled: boolean;

  /**
   * Set when the provider refused the stored OAuth 2.0 refresh token (invalid_grant): executions then
   * fail until the owner links the account again, which must reset it. Optional in the type so that
   * code inserting rows may leave it to the database default (false).
   */
  @Column('boolean', { default: false })
  needs_relink?: boolean;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
