import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, MoreThan, type QueryDeepPartialEntity } from 'typeorm';
import { McpSessionEntity } from './mcp-session.entity.js';
import { McpTokenEntity } from '../mcp-oauth/mcp-token.entity.js';

/** Queries over MCP tokens and sessions; every lookup is scoped to a project or a token hash. */
@Injectable()
export class McpRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get tokens() {
    return this.dataSource.getRepository(McpTokenEntity);
  }

  private get sessions() {
    return this.dataSource.getRepository(McpSessionEntity);
  }

  async insertToken(row: Omit<McpTokenEntity, 'project' | 'created_at' | 'revoked_at'>): Promise<McpTokenEntity> {
    await this.tokens.insert(row);
    return this.tokens.findOneByOrFail({ id: row.id });
  }

  /** A project's unrevoked, unexpired tokens, newest first. */
  listUsableTokens(projectId: string, now: Date): Promise<McpTokenEntity[]> {
    return this.tokens.find({
      where: { project_id: projectId, revoked_at: IsNull(), expires_at: MoreThan(now) },
      order: { created_at: 'DESC', id: 'ASC' },
    });
  }

  /** The unrevoked, unexpired token with this hash. */
  findUsableToken(tokenHash: string, now: Date): Promise<McpTokenEntity | null> {
    return this.tokens.findOneBy({ token_hash: tokenHash, revoked_at: IsNull(), expires_at: MoreThan(now) });
  }

  /** Whether the token with this id is neither revoked nor expired. */
  async isTokenUsable(id: string, now: Date): Promise<boolean> {
    return this.tokens.existsBy({ id, revoked_at: IsNull(), expires_at: MoreThan(now) });
  }

  /** False when the project has no such unrevoked token. */
  async revokeToken(projectId: string, id: string): Promise<boolean> {
    const result = await this.tokens.update(
      { id, project_id: projectId, revoked_at: IsNull() },
      { revoked_at: () => 'now()' },
    );
    if ((result.affected ?? 0) > 0) {
      // Its sessions end with it.
      await this.sessions.delete({ mcp_token_id: id });
      return true;
    }
    return false;
  }

  /** Stores a new session and drops the sessions that began before `expiredBefore`. */
  async insertSession(row: Omit<McpSessionEntity, 'project' | 'created_at'>, expiredBefore: Date): Promise<void> {
    await this.sessions.delete({ created_at: LessThan(expiredBefore) });
    // TypeORM's deep-partial type cannot express jsonb `unknown` values; the row is complete.
    await this.sessions.insert(row as QueryDeepPartialEntity<McpSessionEntity>);
  }

  findSession(
    id: string,
    projectId: string,
    tokenId: string | null,
    startedAfter: Date,
  ): Promise<McpSessionEntity | null> {
    return this.sessions.findOneBy({
      id,
      project_id: projectId,
      mcp_token_id: tokenId ?? IsNull(),
      created_at: MoreThan(startedAfter),
    });
  }

  async deleteSession(id: string, projectId: string, tokenId: string | null): Promise<boolean> {
    const result = await this.sessions.delete({ id, project_id: projectId, mcp_token_id: tokenId ?? IsNull() });
    return (result.affected ?? 0) > 0;
  }
}
