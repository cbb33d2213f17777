import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, type FindOptionsWhere } from 'typeorm';
import type { SecurityScheme } from '../apps/security-scheme.js';
import { updateReturning } from '../database/update-returning.js';
import { LinkedAccountEntity } from './linked-account.entity.js';

export interface LinkedAccountListFilter {
  appName?: string;
  ownerId?: string;
}

/** A row as the service builds it; relations and timestamps are the database's. */
export type NewLinkedAccount = Omit<LinkedAccountEntity, 'app' | 'project' | 'created_at' | 'updated_at'>;

/** Queries over linked accounts; every method is scoped to one project. */
@Injectable()
export class LinkedAccountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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

  /** False when the project has no such account. */
  async deleteForProject(projectId: string, id: string): Promise<boolean> {
    const result = await this.repository.delete({ project_id: projectId, id });
    return (result.affected ?? 0) > 0;
  }
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string } | undefined)?.code === '23505';
}
