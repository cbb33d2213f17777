import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, IsNull } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { ProjectEntity } from './project.entity.js';

export type NewApiKey = Pick<ApiKeyEntity, 'id' | 'project_id' | 'key_hash' | 'key_prefix' | 'expires_at'>;

@Injectable()
export class ProjectsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The project and its first key in one transaction, in which `alsoWrite` (the audit records) is written too. */
  async createWithKey(
    project: Pick<ProjectEntity, 'id' | 'name'>,
    key: NewApiKey,
    alsoWrite?: (manager: EntityManager) => Promise<void>,
  ) {
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(ProjectEntity, project);
      await manager.insert(ApiKeyEntity, key);
      await alsoWrite?.(manager);
    });
  }

  count(): Promise<number> {
    return this.dataSource.getRepository(ProjectEntity).count();
  }

  findById(id: string): Promise<ProjectEntity | null> {
    return this.dataSource.getRepository(ProjectEntity).findOneBy({ id });
  }

  /** Changes the given columns; null when there is no such project. */
  async update(
    id: string,
    changes: Partial<Pick<ProjectEntity, 'name' | 'display_name' | 'logo_url' | 'accent_color' | 'home_url'>>,
  ): Promise<ProjectEntity | null> {
    if (Object.keys(changes).length > 0) {
      await this.dataSource.getRepository(ProjectEntity).update({ id }, changes);
    }
    return this.findById(id);
  }

  exists(id: string): Promise<boolean> {
    return this.dataSource.getRepository(ProjectEntity).existsBy({ id });
  }

  async insertKey(key: NewApiKey): Promise<void> {
    await this.dataSource.getRepository(ApiKeyEntity).insert(key);
  }

  /** A project's keys, revoked ones included, oldest first. */
  listKeys(projectId: string): Promise<ApiKeyEntity[]> {
    return this.dataSource
      .getRepository(ApiKeyEntity)
      .find({ where: { project_id: projectId }, order: { created_at: 'ASC', id: 'ASC' } });
  }

  /** Marks the key revoked; null when there is no such active key. */
  async revokeKey(id: string): Promise<ApiKeyEntity | null> {
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    const key = await repository.findOneBy({ id, revoked_at: IsNull() });
    if (!key) {
      return null;
    }
    await repository.update({ id }, { revoked_at: new Date() });
    return key;
  }

  /** The unrevoked key with this hash, expired or not (the caller compares its expiry). */
  findActiveKeyByHash(keyHash: string): Promise<ApiKeyEntity | null> {
    return this.dataSource.getRepository(ApiKeyEntity).findOneBy({ key_hash: keyHash, revoked_at: IsNull() });
  }

  /** The hashes of the keys that are neither revoked nor expired. */
  async usableKeyHashes(): Promise<string[]> {
    const rows: { key_hash: string }[] = await this.dataSource.query(
      `SELECT "key_hash" FROM "api_keys" WHERE "revoked_at" IS NULL AND ("expires_at" IS NULL OR "expires_at" > now())`,
    );
    return rows.map((row) => row.key_hash);
  }

  /** Records a use, unless one within `resolutionMs` is already recorded (by this instance or another). */
  async touchKey(id: string, at: Date, resolutionMs: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "api_keys" SET "last_used_at" = $2
        WHERE "id" = $1 AND ("last_used_at" IS NULL OR "last_used_at" <= $2::timestamptz - make_interval(secs => $3))`,
      [id, at, resolutionMs / 1000],
    );
  }
}
