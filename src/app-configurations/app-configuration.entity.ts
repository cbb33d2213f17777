import { AppUseRow } from '../apps/app-use-row.js';
import { Column, CreateDateColumn, Entity, Index, UpdateDateColumn } from 'typeorm';
import type { SecurityScheme } from '../apps/security-scheme.js';

@Entity('app_configurations')
@Index(['project_id', 'app_name'], { unique: true })
export class AppConfigurationEntity extends AppUseRow {
  @Column('text')
  security_scheme: SecurityScheme;

  /** Overrides without their secrets; those are sealed in `secrets`. */
  @Column('jsonb')
  security_scheme_overrides: Record<string, Record<string, unknown>>;

  @Column({ type: 'text', nullable: true })
  secrets: string | null;

  /** Values of the server variables of the app's imported OpenAPI document, by name; `{}`: their defaults. */
  @Column('jsonb', { default: () => "'{}'" })
  server_variables: Record<string, string>;

  /** Names of the extra credentials (values sealed in `secrets`), by the document's scheme names. */
  @Column('text', { array: true, default: () => "'{}'" })
  extra_credential_names: string[];

  @Column('boolean')
  enabled: boolean;

  @Column('boolean')
  all_functions_enabled: boolean;

  @Column('text', { array: true })
  enabled_functions: string[];

  /** Executions one linked-account owner may have of this app per OWNER_RATE_LIMIT_WINDOW_SECONDS; null: the default. */
  @Column({ type: 'integer', nullable: true })
  owner_execution_limit: number | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
