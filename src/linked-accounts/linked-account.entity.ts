import { AppEntity } from '../apps/app.entity.js';
import { ProjectEntity } from '../projects/project.entity.js';
import {
  Column,
  JoinColumn,
  ManyToOne,
  type Relation,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';
import type { SecurityScheme } from '../apps/security-scheme.js';
import { OWNER_ID_MAX_LENGTH } from './owner-id.js';

@Entity('linked_accounts')
@Index(['project_id', 'app_name', 'linked_account_owner_id'], { unique: true })
export class LinkedAccountEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid')
  project_id: string;

  @Column('text')
  app_name: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<ProjectEntity>;

  @ManyToOne(() => AppEntity, { onDelete: 'RESTRICT', onUpdate: 'CASCADE' })
  @JoinColumn({ name: 'app_name' })
  app?: Relation<AppEntity>;

  @Column('varchar', { length: OWNER_ID_MAX_LENGTH })
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
