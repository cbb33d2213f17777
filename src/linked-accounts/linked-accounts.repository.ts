import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, type EntityManager, type FindOptionsWhere } from 'typeorm';
import type { SecurityScheme } from '../apps/security-scheme.js';
import { AppConfig } from '../config/app-config.js';
import { updateReturning } from '../database/update-returning.js';
import { LinkedAccountEntity } from './linked-account.entity.js';

export interface LinkedAccountListFilter {
  appName?: string;
  ownerId?: string;
}

/** A row as the service builds it; relations and timestamps are the database's. */
export type NewLinkedAccount = Omit<LinkedAccountEntity, 'app' | 'project' | 'created_at' | 'updated_at'>;

/** What a refresh under the row lock decided: the value to return, and what to write before commit. */
export interface LockedUpdate<T> {
  value: T;
  /** New sealed credentials. */
  credentials?: string;
  needsRelink?: boolean;
}

export interface LockedAccountRow {
  credentials: string;
  needs_relink: boolean;
}

/** Queries over linked accounts; every method is scoped to one project, except the refresh lock (by id). */
@Injectable()
export class LinkedAccountsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  private get repository() {
    return this.dataSource.getRepository(LinkedAccountEntity);
  }

  findForProject(projectId: string, id: string): Promise<LinkedAccountEntity | null> {
    return this.repository.findOneBy({ project_id: projectId, id });
  }

  findByOwner(projectId: string, appName: string, ownerId: string): Promise<LinkedAccountEntity | null> {
    return this.repository.findOneBy({ project_id: projectId, app_name: appName, linked_account_owner_id: ownerId });
  }

  listForProject(projectId: string, filter: LinkedAccountListFilter): Promise<LinkedAccountEntity[]> {
    const where: FindOptionsWhere<LinkedAccountEntity> = { project_id: projectId };
    if (filter.appName !== undefined) {
      where.app_name = filter.appName;
    }
    if (filter.ownerId !== undefined) {
      where.linked_account_owner_id = filter.ownerId;
    }
    return this.repository.find({ where, order: { created_at: 'ASC', id: 'ASC' } });
  }

  /** False when the project already has an account of that owner for the app (a concurrent link won). */
  async insert(account: NewLinkedAccount): Promise<boolean> {
    try {
      await this.repository.insert(account);
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) {
        return false;
      }
      throw error;
    }
  }

  /**
   * Stores the credentials of a link made by the owner (OAuth 2.0 callback, connect link): a new
   * account, or — when the project already has one for the app and owner — the same account (same
   * id) with its scheme and credentials replaced and its need for re-linking cleared. One statement,
   * so concurrent links cannot create two. Returns the id.
   */
  async upsertAccount(account: {
    id: string;
    project_id: string;
    app_name: string;
    linked_account_owner_id: string;
    security_scheme: SecurityScheme;
    credentials: string;
  }): Promise<string> {
    const rows: { id: string }[] = await this.dataSource.query(
      `INSERT INTO "linked_accounts"
         ("id", "project_id", "app_name", "linked_account_owner_id", "security_scheme", "credentials", "enabled", "needs_relink")
       VALUES ($1, $2, $3, $4, $5, $6, true, false)
       ON CONFLICT ("project_id", "app_name", "linked_account_owner_id") DO UPDATE SET
         "security_scheme" = EXCLUDED."security_scheme",
         "credentials" = EXCLUDED."credentials",
         "needs_relink" = false,
         "updated_at" = now()
       RETURNING "id"`,
      [
        account.id,
        account.project_id,
        account.app_name,
        account.linked_account_owner_id,
        account.security_scheme,
        account.credentials,
      ],
    );
    return rows[0].id;
  }

  /**
   * Writes `enabled` alone and returns the account as stored, or null when the project has no such
   * account. Credentials and `needs_relink` are not written, so a token refresh committed meanwhile stays.
   */
  setEnabled(projectId: string, id: string, enabled: boolean): Promise<LinkedAccountEntity | null> {
    return updateReturning(this.repository, { project_id: projectId, id }, { enabled });
  }

  /**
   * Runs `work` holding the account's row lock (SELECT … FOR UPDATE), so that across every instance
   * sharing a PostgreSQL server one caller at a time refreshes its tokens; the others then read the
   * refreshed row. `work` must not query the database. Returns what `work` decided and whether it wrote.
   *
   * The embedded database is owned by exactly one process, so the caller's in-process single flight
   * is the whole lock there, and no transaction is held across `work`: on the embedded database an
   * open transaction holds up every other connection, and messages of queries that other connections
   * had under way when it began are answered wrongly (pglite-socket queues protocol messages, not
   * whole queries).
   */
  async withLockedAccount<T>(
    id: string,
    work: (row: LockedAccountRow | null) => Promise<LockedUpdate<T>>,
  ): Promise<{ value: T; written: boolean }> {
    if (this.config.embedded) {
      const rows: LockedAccountRow[] = await this.dataSource.query(
        'SELECT "credentials", "needs_relink" FROM "linked_accounts" WHERE "id" = $1',
        [id],
      );
      const update = await work(rows[0] ?? null);
      return { value: update.value, written: await this.applyLockedUpdate(this.dataSource.manager, id, update) };
    }
    return this.dataSource.transaction(async (manager) => {
      const rows: LockedAccountRow[] = await manager.query(
        'SELECT "credentials", "needs_relink" FROM "linked_accounts" WHERE "id" = $1 FOR UPDATE',
        [id],
      );
      const update = await work(rows[0] ?? null);
      return { value: update.value, written: await this.applyLockedUpdate(manager, id, update) };
    });
  }

  /** One statement, so that on the embedded database it is atomic without a transaction. */
  private async applyLockedUpdate(manager: EntityManager, id: string, update: LockedUpdate<unknown>): Promise<boolean> {
    if (update.credentials === undefined && !update.needsRelink) {
      return false;
    }
    await manager.query(
      `UPDATE "linked_accounts" SET "credentials" = COALESCE($2, "credentials"), ` +
        `"needs_relink" = "needs_relink" OR $3, "updated_at" = now() WHERE "id" = $1`,
      [id, update.credentials ?? null, Boolean(update.needsRelink)],
    );
    return true;
  }

  /** False when the project has no such account. */
  async deleteForProject(projectId: string, id: string): Promise<boolean> {
    const result = await this.repository.delete({ project_id: projectId, id });
    return (result.affected ?? 0) > 0;
  }
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string } | undefined)?.code === '23505';
}
