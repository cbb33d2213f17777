import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, LessThan } from 'typeorm';
import { AppEntity } from '../apps/app.entity.js';
import { ProjectEntity } from '../projects/project.entity.js';
import { OAuth2StateEntity } from './oauth2-state.entity.js';

/** A state row as the service builds it; the creation time is the database's. */
export type NewOAuth2State = Omit<OAuth2StateEntity, 'project' | 'app' | 'created_at'>;

/** Queries over pending OAuth 2.0 linking flows. */
@Injectable()
export class OAuth2Repository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get repository() {
    return this.dataSource.getRepository(OAuth2StateEntity);
  }

  async insert(state: NewOAuth2State): Promise<void> {
    await this.repository.insert(state);
  }

  /**
   * Takes the flow of `stateHash` out of the table and returns it, or null when there is none. One
   * statement, so that of two callbacks with the same state (on any instances) exactly one gets it.
   */
  async consume(stateHash: string): Promise<OAuth2StateEntity | null> {
    const result = await this.repository
      .createQueryBuilder()
      .delete()
      .from(OAuth2StateEntity)
      .where('state_hash = :stateHash', { stateHash })
      .returning('*')
      .execute();
    const rows = result.raw as OAuth2StateEntity[];
    return rows[0] ?? null;
  }

  /** What a callback page shows of a flow: its project (the developer's branding) and its app's display name. */
  async findPageContext(
    projectId: string,
    appName: string,
  ): Promise<{ project: ProjectEntity | null; appDisplayName: string | null }> {
    const project = await this.dataSource.getRepository(ProjectEntity).findOneBy({ id: projectId });
    const app = await this.dataSource
      .getRepository(AppEntity)
      .findOne({ where: { name: appName }, select: { name: true, display_name: true } });
    return { project, appDisplayName: app?.display_name ?? null };
  }

  /** Forgets flows that expired before `before`; flows nobody finished would otherwise stay forever. */
  async deleteExpiredBefore(before: Date): Promise<void> {
    await this.repository.delete({ expires_at: LessThan(before) });
  }
}
