import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { ApiKeyEntity } from './api-key.entity.js';
import { ProjectEntity } from './project.entity.js';

@Injectable()
export class ProjectsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async createWithKey(
    project: Pick<ProjectEntity, 'id' | 'name'>,
    key: Omit<ApiKeyEntity, 'created_at' | 'revoked_at'>,
  ) {
    await this.dataSource.transaction(async (manager) => {
      await manager.insert(ProjectEntity, project);
      await manager.insert(ApiKeyEntity, key);
    });
  }

  count(): Promise<number> {
    return this.dataSource.getRepository(ProjectEntity).count();
  }

  exists(id: string): Promise<boolean> {
    return this.dataSource.getRepository(ProjectEntity).existsBy({ id });
  }

  async insertKey(key: Omit<ApiKeyEntity, 'created_at' | 'revoked_at'>): Promise<void> {
    await this.dataSource.getRepository(ApiKeyEntity).insert(key);
  }

  /** Marks the key revoked; false when there is no such active key. */
  async revokeKey(id: string): Promise<ApiKeyEntity | null> {
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    const key = await repository.findOneBy({ id, revoked_at: IsNull() });
    if (!key) {
      return null;
    }
    await repository.update({ id }, { revoked_at: new Date() });
    return key;
  }

  findActiveKeyByHash(keyHash: string): Promise<ApiKeyEntity | null> {
    return this.dataSource.getRepository(ApiKeyEntity).findOneBy({ key_hash: keyHash, revoked_at: IsNull() });
  }
}
