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

@Entity('app_configurations')
@Index(['project_id', 'app_name'], { unique: true })
export class AppConfigurationEntity {
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

  @Column('text')
  security_scheme: SecurityScheme;

  /** Overrides without their secrets; those are sealed in `secrets`. */
  @Column('jsonb')
  security_scheme_overrides: Record<string, Record<string, unknown>>;

  @Column({ type: 'text', nullable: true })
  secrets: string | null;

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
