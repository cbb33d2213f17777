import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import { AppEntity } from '../apps/app.entity.js';
import { LinkedAccountEntity } from '../linked-accounts/linked-account.entity.js';
import { McpServerEntity } from './mcp-server.entity.js';

export type McpServerSync = Pick<
  McpServerEntity,
  'server_name' | 'server_version' | 'protocol_version' | 'tool_count' | 'synced_at' | 'sync_error'
>;

/** A project's own server with its app's columns the API shows. */
export type ProjectMcpServer = McpServerEntity & { app: Pick<AppEntity, 'display_name' | 'security_schemes'> };

@Injectable()
export class McpServersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findByApp(appName: string): Promise<McpServerEntity | null> {
    return this.dataSource.getRepository(McpServerEntity).findOneBy({ app_name: appName });
  }

  /** The servers registered at `url`, each with the project that owns its app (null for the catalogue's). */
  async findByUrl(url: string): Promise<(McpServerEntity & { project_id: string | null })[]> {
    const rows = await this.dataSource
      .getRepository(McpServerEntity)
      .createQueryBuilder('s')
      .innerJoin('s.app', 'a')
      .addSelect('a.project_id')
      .where('s.url = :url', { url })
      .orderBy('s.app_name', 'ASC')
      .getRawAndEntities<{ s_app_name: string; a_project_id: string | null }>();
    const owners = new Map(rows.raw.map((row) => [row.s_app_name, row.a_project_id]));
    return rows.entities.map((server) => ({ ...server, project_id: owners.get(server.app_name) ?? null }));
  }

  async listAll(): Promise<McpServerEntity[]> {
    return this.dataSource.getRepository(McpServerEntity).find({ order: { app_name: 'ASC' } });
  }

  /** The servers a project added as its own apps, by app name (byte order), or the one named. */
  async listForProject(projectId: string, appName?: string): Promise<ProjectMcpServer[]> {
    const query = this.dataSource
      .getRepository(McpServerEntity)
      .createQueryBuilder('s')
      .innerJoin('s.app', 'a')
      .addSelect(['a.display_name', 'a.security_schemes'])
      .where('a.project_id = :projectId', { projectId });
    if (appName !== undefined) {
      query.andWhere('s.app_name = :appName', { appName });
    }
    return query.orderBy('s.app_name COLLATE "C"', 'ASC').getMany() as Promise<ProjectMcpServer[]>;
  }

  /** The project that owns the app: null for a catalogue app, undefined when there is no such app. */
  async ownerOf(appName: string): Promise<string | null | undefined> {
    const app = await this.dataSource
      .getRepository(AppEntity)
      .findOne({ select: { name: true, project_id: true }, where: { name: appName } });
    return app ? app.project_id : undefined;
  }

  /**
   * Takes the app name for the project's own app, in one statement: a row nobody sees (private, inactive)
   * that the catalogue's writer then fills; answers false when the name is taken, by anyone.
   */
  async reserveApp(appName: string, projectId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO "apps" ("name", "display_name", "provider", "version", "description", "logo", "categories",
         "visibility", "active", "security_schemes", "content_hash", "project_id")
       VALUES ($1, $1, '', '', '', '', '{}', 'private', false, '{}', '', $2)
       ON CONFLICT ("name") DO NOTHING RETURNING "name"`,
      [appName, projectId],
    );
    return rows.length === 1;
  }

  /** Gives a reserved name back when the app could not be written (the row is still the empty one). */
  async releaseApp(appName: string, projectId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "apps" WHERE "name" = $1 AND "project_id" = $2 AND "content_hash" = ''`, [
      appName,
      projectId,
    ]);
  }

  /**
   * Deletes the project's own app in one transaction: its linked accounts and configuration (the
   * project's only: nobody else sees the app), then the app, whose functions, server row, pending
   * links and OAuth 2.0 states go with it. The execution log keeps its records. Answers how many
   * linked accounts went, or null when the project has no such app.
   */
  async removeProjectApp(appName: string, projectId: string): Promise<number | null> {
    return this.dataSource.transaction(async (manager) => {
      const app = await manager
        .getRepository(AppEntity)
        .createQueryBuilder('a')
        .setLock('pessimistic_write')
        .where('a.name = :appName AND a.project_id = :projectId', { appName, projectId })
        .getOne();
      if (!app) {
        return null;
      }
      const accounts = await manager.getRepository(LinkedAccountEntity).delete({ app_name: appName });
      await manager.getRepository(AppConfigurationEntity).delete({ app_name: appName });
      await manager.getRepository(AppEntity).delete({ name: appName, project_id: projectId });
      return accounts.affected ?? 0;
    });
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
