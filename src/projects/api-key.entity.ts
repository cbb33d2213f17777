import { ProjectEntity } from './project.entity.js';
import { Column, JoinColumn, ManyToOne, type Relation, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** Only a SHA-256 of the key is stored; the key itself is shown once, when it is created. */
@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Index()
  @Column('uuid')
  project_id: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<ProjectEntity>;

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
