import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  OneToOne,
  PrimaryColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { AppEntity } from '../apps/app.entity.js';

/** A remote MCP server added as an app: its tools are the app's functions (`protocol: mcp`). */
@Entity('mcp_servers')
export class McpServerEntity {
  @PrimaryColumn('text')
  app_name: string;

  @OneToOne(() => AppEntity, { onDelete: 'CASCADE', onUpdate: 'CASCADE' })
  @JoinColumn({ name: 'app_name', foreignKeyConstraintName: 'FK_mcp_servers_app' })
  app?: Relation<AppEntity>;

  /** The Streamable HTTP endpoint, as registered. */
  @Column('text')
  url: string;

  @Column({ type: 'text', nullable: true })
  server_name: string | null;

  @Column({ type: 'text', nullable: true })
  server_version: string | null;

  /** The revision the last sync negotiated (2026-07-28, 2025-11-25…). */
  @Column({ type: 'text', nullable: true })
  protocol_version: string | null;

  /** Active tools after the last sync. */
  @Column('integer', { default: 0 })
  tool_count: number;

  @Column({ type: 'timestamptz', nullable: true })
  synced_at: Date | null;

  /** Why the last sync failed; null after a sync that succeeded. */
  @Column({ type: 'text', nullable: true })
  sync_error: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
