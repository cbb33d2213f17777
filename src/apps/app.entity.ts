import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { ProjectEntity } from '../projects/project.entity.js';
import type { DefaultCredentialsByScheme, SchemeSettingsByScheme } from './security-scheme.js';

/** Scheme settings as stored: the OAuth 2.0 client secret is kept apart, sealed, in `secrets`. */
export type StoredSecuritySchemes = Partial<SchemeSettingsByScheme>;

/** Sealed (AES-256-GCM) JSON of an app's secrets. */
export interface AppSecrets {
  oauth2_client_secret?: string;
  default_security_credentials_by_scheme?: DefaultCredentialsByScheme;
}

/** Pages are in byte order (`name COLLATE "C"`): an expression index TypeORM cannot declare, made by its migration. */
@Index('IDX_apps_name_bytes', { synchronize: false })
@Entity('apps')
export class AppEntity {
  @PrimaryColumn('text')
  name: string;

  @Column('text')
  display_name: string;

  @Column('text')
  provider: string;

  @Column('text')
  version: string;

  @Column('text')
  description: string;

  @Column('text')
  logo: string;

  @Column('text', { array: true })
  categories: string[];

  /** `private`: seen by no project but its owner (`project_id`), or by none when it has no owner. */
  @Column('text')
  visibility: 'public' | 'private';

  /** The project that added the app as its own (a remote MCP server added through the API); null for the catalogue's. */
  @Column({ type: 'uuid', nullable: true })
  project_id: string | null;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id', foreignKeyConstraintName: 'FK_apps_project' })
  project?: Relation<ProjectEntity>;

  @Column('boolean')
  active: boolean;

  @Column('jsonb')
  security_schemes: StoredSecuritySchemes;

  @Column({ type: 'text', nullable: true })
  secrets: string | null;

  /** Hash of the catalogue file content, to tell an unchanged re-import from an update. */
  @Column('text')
  content_hash: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
