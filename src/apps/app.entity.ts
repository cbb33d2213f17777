import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
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

  @Column('text')
  visibility: 'public' | 'private';

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
