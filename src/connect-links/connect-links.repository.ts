import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Raw } from 'typeorm';
import { ConnectLinkEntity } from './connect-link.entity.js';
import { returnedRows } from '../database/returned-rows.js';

/** A link as the service builds it; counters, relations and the creation time are the database's. */
export type NewConnectLink = Omit<
  ConnectLinkEntity,
  'project' | 'app' | 'created_at' | 'post_count' | 'post_window_started_at' | 'completed_at' | 'oauth2_started_at'
>;

/** Queries over connect links. */
@Injectable()
export class ConnectLinksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get repository() {
    return this.dataSource.getRepository(ConnectLinkEntity);
  }

  async insert(link: NewConnectLink): Promise<void> {
    await this.repository.insert(link);
  }

  findForProject(projectId: string, id: string): Promise<ConnectLinkEntity | null> {
    return this.repository.findOneBy({ project_id: projectId, id });
  }

  /** The link with its app and project (what the page shows). */
  findWithAppAndProject(id: string): Promise<ConnectLinkEntity | null> {
    return this.repository.findOne({ where: { id }, relations: { app: true, project: true } });
  }

  /** False when the link was not pending (already used, revoked, or past its expiry) at the time of the update. */
  async revoke(projectId: string, id: string): Promise<boolean> {
    const result = await this.repository.update(
      { project_id: projectId, id, status: 'pending', expires_at: Raw((column) => `${column} > now()`) },
      { status: 'revoked' },
    );
    return (result.affected ?? 0) > 0;
  }

  /**
   * Marks a pending, unexpired link completed with the account it linked. One statement: of two
   * concurrent completions exactly one wins (single use). False when the link was no longer usable.
   */
  async complete(id: string, linkedAccountId: string | null): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `UPDATE "connect_links" SET "status" = 'completed', "linked_account_id" = $2, "completed_at" = now()
       WHERE "id" = $1 AND "status" = 'pending' AND "expires_at" > now()
       RETURNING "id"`,
      [id, linkedAccountId],
    );
    return returnedRows(rows).length > 0;
  }

  /** Sets the account of a link claimed with `complete(id, null)`. */
  async attachAccount(id: string, linkedAccountId: string): Promise<void> {
    await this.repository.update({ id, status: 'completed' }, { linked_account_id: linkedAccountId });
  }

  /** Gives a claimed link back (linking failed after the claim), so the user can try again. */
  async release(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE "connect_links" SET "status" = 'pending', "completed_at" = NULL
       WHERE "id" = $1 AND "status" = 'completed' AND "linked_account_id" IS NULL`,
      [id],
    );
  }

  /** The database's clock, like the linked account's `updated_at` it is compared with. */
  async markOAuth2Started(id: string): Promise<void> {
    await this.repository.update({ id }, { oauth2_started_at: () => 'now()' });
  }

  /**
   * Counts one form post in the link's current fixed window (restarting the window when it is over)
   * and returns the count in the window, atomically, so concurrent posts on any instance are counted.
   */
  async countPost(id: string, windowMs: number): Promise<number> {
    const rows: unknown[] = await this.dataSource.query(
      `UPDATE "connect_links" SET
         "post_count" = CASE WHEN "post_window_started_at" > now() - make_interval(secs => $2) THEN "post_count" + 1 ELSE 1 END,
         "post_window_started_at" = CASE WHEN "post_window_started_at" > now() - make_interval(secs => $2)
           THEN "post_window_started_at" ELSE now() END
       WHERE "id" = $1
       RETURNING "post_count"`,
      [id, windowMs / 1000],
    );
    const row = returnedRows(rows)[0] as { post_count: number } | undefined;
    return row ? Number(row.post_count) : 0;
  }
}
