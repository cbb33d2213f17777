import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { McpServerEntity } from './mcp-server.entity.js';

export type McpServerSync = Pick<
  McpServerEntity,
  'server_name' | 'server_version' | 'protocol_version' | 'tool_count' | 'synced_at' | 'sync_error'
>;

@Injectable()
export class McpServersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findByApp(appName: string): Promise<McpServerEntity | null> {
    return this.dataSource.getRepository(McpServerEntity).findOneBy({ app_name: appName });
  }

  async findByUrl(url: string): Promise<McpServerEntity[]> {
    return this.dataSource.getRepository(McpServerEntity).find({ where: { url }, order: { app_name: 'ASC' } });
  }

  async listAll(): Promise<McpServerEntity[]> {
    return this.dataSource.getRepository(McpServerEntity).find({ order: { app_name: 'ASC' } });
  }

  /** The server of an app, created or moved to a new address; the app row must exist. */
  async register(appName: string, url: string): Promise<void> {
    await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(McpServerEntity)
      .values({ app_name: appName, url })
      .orUpdate(['url', 'updated_at'], ['app_name'])
      .updateEntity(false)
      .execute();
  }

  async recordSync(appName: string, sync: Partial<McpServerSync>): Promise<void> {
    await this.dataSource.getRepository(McpServerEntity).update({ app_name: appName }, sync);
  }
}
