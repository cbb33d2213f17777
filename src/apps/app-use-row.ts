import { Column, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { ProjectOwnedRow } from '../projects/project-owned-row.js';
import { AppEntity } from './app.entity.js';

/**
 * A project's use of an app (its configuration, a linked account): an app in use cannot be deleted, and a
 * renamed app carries its uses along.
 */
export abstract class AppUseRow extends ProjectOwnedRow {
  @Column('text')
  app_name: string;

  @ManyToOne(() => AppEntity, { onDelete: 'RESTRICT', onUpdate: 'CASCADE' })
  @JoinColumn({ name: 'app_name' })
  app?: Relation<AppEntity>;
}
