import { Column, CreateDateColumn, Entity, ForeignKey, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export interface RestProtocolData {
  method: string;
  path: string;
  server_url: string;
}

/** The hints a remote MCP server's tool annotations give clients, kept as the server sent them. */
export interface McpToolHints {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** `protocol_data` of a tool of a remote MCP server: the server and the tool's own name there. */
export interface McpProtocolData {
  server_url: string;
  tool: string;
  annotations?: McpToolHints;
}

export type FunctionProtocol = 'rest' | 'connector' | 'mcp';

/** Pages are in byte order (`name COLLATE "C"`): an expression index TypeORM cannot declare, made by its migration. */
@Index('IDX_functions_name_bytes', { synchronize: false })
@Entity('functions')
export class FunctionEntity {
  @PrimaryColumn('text')
  name: string;

  /** Its app, by the table's name: apps sit above functions (an app's details list them). */
  @Index()
  @ForeignKey('apps', { onDelete: 'CASCADE', onUpdate: 'CASCADE' })
  @Column('text')
  app_name: string;

  @Column('text')
  description: string;

  @Column('text', { array: true })
  tags: string[];

  @Column('text')
  visibility: 'public' | 'private';

  @Column('boolean')
  active: boolean;

  @Column('text')
  protocol: FunctionProtocol;

  @Column('jsonb')
  protocol_data: RestProtocolData | McpProtocolData | Record<string, unknown>;

  @Column('jsonb')
  parameters: Record<string, unknown>;

  @Column('jsonb')
  response: Record<string, unknown>;

  @Column('text')
  content_hash: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
