import { Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { ProjectOwnedRow } from './project-owned-row.js';

/** Only a SHA-256 of the key is stored; the key itself is shown once, when it is created. */
@Entity('api_keys')
@Index(['project_id'])
export class ApiKeyEntity extends ProjectOwnedRow {
  @Index({ unique: true })
  @Column('text')
  key_hash: string;

  /** The first characters of the key, enough for a person to recognise it in a list. */
  @Column('text')
  key_prefix: string;

  @Column({ type: 'timestamptz', nullable: true })
  revoked_at: Date | null;

  /** From then on the key is refused like an unknown one; null for a key that does not expire. */
  @Column({ type: 'timestamptz', nullable: true })
  expires_at: Date | null;

  /** Written at most once a minute per key (LAST_USED_RESOLUTION_MS), so that a request costs no write. */
  @Column({ type: 'timestamptz', nullable: true })
  last_used_at: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
