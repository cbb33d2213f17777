import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, MoreThan, type QueryDeepPartialEntity } from 'typeorm';
import { McpTokenEntity } from './mcp-token.entity.js';
import { ProjectEntity } from '../projects/project.entity.js';
import { McpIdentityProviderEntity } from './identity-provider.entity.js';
import { McpOAuthRecordEntity } from './oauth-record.entity.js';

/** The stored form of a record id: token values are ids, so only their SHA-256 is kept. */
export function recordIdHash(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** Queries of MCP sign-in: identity providers, the authorization server's records, the tokens it grants. */
@Injectable()
export class McpOAuthRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get records() {
    return this.dataSource.getRepository(McpOAuthRecordEntity);
  }

  private get providers() {
    return this.dataSource.getRepository(McpIdentityProviderEntity);
  }

  findIdentityProvider(projectId: string): Promise<McpIdentityProviderEntity | null> {
    return this.providers.findOneBy({ project_id: projectId });
  }

  async saveIdentityProvider(row: Omit<McpIdentityProviderEntity, 'project' | 'created_at' | 'updated_at'>) {
    await this.providers.upsert(row, ['project_id']);
    return this.providers.findOneByOrFail({ project_id: row.project_id });
  }

  /** Also forgets everything its authorization server kept (clients, grants, tokens). */
  async deleteIdentityProvider(projectId: string): Promise<boolean> {
    await this.records.delete({ project_id: projectId });
    const result = await this.providers.delete({ project_id: projectId });
    return (result.affected ?? 0) > 0;
  }

  findProject(projectId: string): Promise<ProjectEntity | null> {
    return this.dataSource.getRepository(ProjectEntity).findOneBy({ id: projectId });
  }

  /** The display names of the apps the project configured and enabled. */
  async enabledApps(projectId: string): Promise<string[]> {
    const rows: { display_name: string }[] = await this.dataSource.query(
      `SELECT a."display_name" FROM "app_configurations" c JOIN "apps" a ON a."name" = c."app_name"
       WHERE c."project_id" = $1 AND c."enabled" ORDER BY a."display_name"`,
      [projectId],
    );
    return rows.map((row) => row.display_name);
  }

  async upsertRecord(
    projectId: string,
    model: string,
    id: string,
    payload: Record<string, unknown>,
    expiresInSeconds: number | undefined,
  ): Promise<void> {
    // TypeORM's deep-partial type cannot express jsonb `unknown` values; the row is complete.
    await this.records.upsert(
      {
        project_id: projectId,
        model,
        id_hash: recordIdHash(id),
        payload,
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        expires_at: expiresInSeconds ? new Date(Date.now() + expiresInSeconds * 1000) : null,
        consumed_at: null,
      } as QueryDeepPartialEntity<McpOAuthRecordEntity>,
      ['project_id', 'model', 'id_hash'],
    );
  }

  /** An unexpired record by id (or by a session's uid). */
  async findRecord(
    projectId: string,
    model: string,
    by: { id: string } | { uid: string },
  ): Promise<McpOAuthRecordEntity | null> {
    const where = 'id' in by ? { id_hash: recordIdHash(by.id) } : { uid: by.uid };
    const row = await this.records.findOneBy({ project_id: projectId, model, ...where });
    if (!row || (row.expires_at && row.expires_at.getTime() <= Date.now())) {
      return null;
    }
    return row;
  }

  async consumeRecord(projectId: string, model: string, id: string): Promise<void> {
    await this.records.update(
      { project_id: projectId, model, id_hash: recordIdHash(id) },
      { consumed_at: () => 'now()' },
    );
  }

  async destroyRecord(projectId: string, model: string, id: string): Promise<void> {
    await this.records.delete({ project_id: projectId, model, id_hash: recordIdHash(id) });
  }

  async revokeByGrantId(projectId: string, grantId: string): Promise<void> {
    await this.records.delete({ project_id: projectId, grant_id: grantId });
  }

  /** The owner-scoped MCP token a consent creates; its secret is never handed out (the OAuth tokens stand for it). */
  async insertGrantToken(row: Omit<McpTokenEntity, 'project' | 'created_at' | 'revoked_at'>): Promise<void> {
    await this.dataSource.getRepository(McpTokenEntity).insert(row);
  }

  /** Marks the MCP token of a grant revoked; false when it was revoked already (or is not the project's). */
  async revokeGrantToken(projectId: string, id: string): Promise<boolean> {
    const result = await this.dataSource
      .getRepository(McpTokenEntity)
      .update({ id, project_id: projectId, revoked_at: IsNull() }, { revoked_at: () => 'now()' });
    return (result.affected ?? 0) > 0;
  }

  /** The unrevoked, unexpired MCP token of a project by id. */
  findUsableGrantToken(projectId: string, id: string): Promise<McpTokenEntity | null> {
    return this.dataSource
      .getRepository(McpTokenEntity)
      .findOneBy({ id, project_id: projectId, revoked_at: IsNull(), expires_at: MoreThan(new Date()) });
  }
}
