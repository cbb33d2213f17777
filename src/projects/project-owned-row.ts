import { Column, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { ProjectEntity } from './project.entity.js';

/**
 * The columns a row that a project owns begins with: its id and its project, with which it is deleted.
 * An entity extends it (its own table; TypeORM reads the inherited columns first, so the order stays).
 */
export abstract class ProjectOwnedRow {
  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid')
  project_id: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: Relation<ProjectEntity>;
}
