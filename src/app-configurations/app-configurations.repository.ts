import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, QueryFailedError, type QueryDeepPartialEntity } from 'typeorm';
import { updateReturning } from '../database/update-returning.js';
import { AppConfigurationEntity } from './app-configuration.entity.js';

export interface AppConfigurationListFilter {
  appNames?: string[];
  limit: number;
  offset: number;
}

/** A row as the service builds it; relations and timestamps are the database's. */
export type NewAppConfiguration = Omit<AppConfigurationEntity, 'app' | 'project' | 'created_at' | 'updated_at'>;

/** The columns an update may change. */
export type ConfigurationChanges = Partial<
  Pick<
    AppConfigurationEntity,
    | 'security_scheme'
    | 'security_scheme_overrides'
    | 'secrets'
    | 'enabled'
    | 'all_functions_enabled'
    | 'enabled_functions'
    | 'owner_execution_limit'
    | 'server_variables'
    | 'extra_credential_names'
  >
>;

/** Queries over app configurations; every method is scoped to one project. */
@Injectable()
export class AppConfigurationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get repository() {
    return this.dataSource.getRepository(AppConfigurationEntity);
  }

  findForProject(projectId: string, appName: string): Promise<AppConfigurationEntity | null> {
    return this.repository.findOneBy({ project_id: projectId, app_name: appName });
  }

  listForProject(projectId: string, filter: AppConfigurationListFilter): Promise<AppConfigurationEntity[]> {
    const query = this.repository.createQueryBuilder('c').where('c.project_id = :projectId', { projectId });
    if (filter.appNames) {
      query.andWhere('c.app_name = ANY(CAST(:appNames AS text[]))', { appNames: filter.appNames });
    }
    // Byte order, so that pages are the same on every database whatever its default collation.
    return query.orderBy('c.app_name COLLATE "C"', 'ASC').offset(filter.offset).limit(filter.limit).getMany();
  }

  /** False when the project already has a configuration for the app (a concurrent create won). */
  async insert(configuration: NewAppConfiguration): Promise<boolean> {
    try {
      // TypeORM's deep-partial type cannot express jsonb `unknown` values; the row is complete.
      await this.repository.insert(configuration as QueryDeepPartialEntity<AppConfigurationEntity>);
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) {
        return false;
      }
      throw error;
    }
  }

  /**
   * Writes only the given columns and returns the configuration as stored, or null when the project
   * has none for the app; columns left out are not written back, so concurrent changes to them stay.
   */
  update(projectId: string, appName: string, changes: ConfigurationChanges): Promise<AppConfigurationEntity | null> {
    // TypeORM's deep-partial type cannot express jsonb `unknown` values.
    const values = changes as QueryDeepPartialEntity<AppConfigurationEntity>;
    return updateReturning(this.repository, { project_id: projectId, app_name: appName }, values);
  }

  /**
   * Removes the project's linked accounts of the app, then the configuration, in one transaction, in which
   * `alsoWrite` (the audit record) is written too. Returns how many linked accounts went, or null when the
   * project has no such configuration.
   */
  deleteWithLinkedAccounts(projectId: string, appName: string, alsoWrite?: DeletionWrite): Promise<number | null> {
    return this.dataSource.transaction(async (manager) => {
      // The row lock keeps a concurrent delete from reporting the same accounts twice.
      const configuration = await manager.findOne(AppConfigurationEntity, {
        where: { project_id: projectId, app_name: appName },
        lock: { mode: 'pessimistic_write' },
      });
      if (!configuration) {
        return null;
      }
      // The accounts by their table's name: linked-accounts sits above this module (it links through configurations).
      const deleted = await manager
        .createQueryBuilder()
        .delete()
        .from('linked_accounts')
        .where('project_id = :projectId AND app_name = :appName', { projectId, appName })
        .returning('*')
        .execute();
      const accounts = (deleted.raw ?? []) as DeletedAccount[];
      await manager.delete(AppConfigurationEntity, { id: configuration.id });
      await alsoWrite?.(manager, configuration, accounts);
      return accounts.length;
    });
  }
}

/** A linked account deleted with its configuration: the row as the database returned it. */
export type DeletedAccount = { id: string } & Record<string, unknown>;

/** What else a deletion writes in its transaction, given the rows it deleted. */
export type DeletionWrite = (
  manager: EntityManager,
  configuration: AppConfigurationEntity,
  accounts: DeletedAccount[],
) => Promise<void>;

function isUniqueViolation(error: unknown): boolean {
  return error instanceof QueryFailedError && (error.driverError as { code?: string } | undefined)?.code === '23505';
}
