import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('projects')
export class ProjectEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  /** The name end users know the developer's app by, on Patchbay's pages; `name` when null. */
  @Column({ type: 'text', nullable: true })
  display_name: string | null;

  /** An https or data:image URL (project-branding.ts checks it), shown on the end-user pages. */
  @Column({ type: 'text', nullable: true })
  logo_url: string | null;

  /** #rrggbb, the buttons' colour on the end-user pages. */
  @Column({ type: 'varchar', length: 7, nullable: true })
  accent_color: string | null;

  /** The developer's app, where the end-user pages lead back to (https, or http on a loopback address). */
  @Column({ type: 'text', nullable: true })
  home_url: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
