import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import { FunctionEntity } from './function.entity.js';
import type { ServerTemplate } from './openapi-wire.js';
import { configuredSql, runnableSql } from '../catalog-rules/runnable.js';
import { visibleSql, visibleToSql } from '../catalog-rules/visibility.js';

/** Visible to the project of the `projectId` parameter: the function, and its app to that project. */
const VISIBLE = `${visibleSql('f')} AND ${visibleToSql('a')}`;

export interface FunctionSearch {
  /** The caller project, for `configuredOnly`. */
  projectId: string;
  appNames?: string[];
  configuredOnly: boolean;
  limit: number;
  offset: number;
}

export interface VisibleFunctionFilter {
  /** The caller project: the public catalogue and its own apps are visible to it. */
  projectId: string;
  appNames?: string[];
  functionNames?: string[];
  limit?: number;
  offset?: number;
}

export interface RunnableFunctionFilter {
  appNames?: string[];
  /** Only functions whose name sorts (byte order) after this one. */
  afterName?: string;
  limit: number;
}

export type FunctionSummary = Pick<FunctionEntity, 'name' | 'description'>;

/** Queries over the catalogue's functions. Visible: the function is public and active, its app visible to the project. */
@Injectable()
export class FunctionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Names of the visible functions of a visible app. */
  async visibleNamesOfApp(appName: string, projectId: string): Promise<string[]> {
    const rows: { name: string }[] = await this.visible(projectId)
      .select('f.name', 'name')
      .andWhere('f.app_name = :appName', { appName })
      .getRawMany();
    return rows.map((row) => row.name);
  }

  /** The distinct server templates of the app's functions (imported operations whose server URL has variables). */
  async serverTemplatesOfApp(appName: string): Promise<ServerTemplate[]> {
    const rows: { server: ServerTemplate }[] = await this.dataSource.query(
      `SELECT DISTINCT protocol_data #> '{openapi,server}' AS server FROM functions
        WHERE app_name = $1 AND protocol_data #> '{openapi,server}' IS NOT NULL`,
      [appName],
    );
    return rows.map((row) => row.server);
  }

  /**
   * The document's names of the apiKey schemes that the app's functions combine with another (their stored
   * requirements), whose values an app configuration gives in `extra_credentials`.
   */
  async extraCredentialSchemesOfApp(appName: string): Promise<string[]> {
    const rows: { scheme: string }[] = await this.dataSource.query(
      `SELECT DISTINCT member ->> 'scheme' AS scheme
         FROM functions,
              jsonb_array_elements(protocol_data #> '{openapi,security}') AS requirement,
              jsonb_array_elements(requirement) AS member
        WHERE app_name = $1 AND jsonb_typeof(protocol_data #> '{openapi,security}') = 'array' AND member ? 'in'`,
      [appName],
    );
    return rows.map((row) => row.scheme).sort();
  }

  /** Visible functions, whole rows, by name: all of them or those of some apps or names, optionally one page. */
  findVisible(filter: VisibleFunctionFilter): Promise<FunctionEntity[]> {
    const query = this.visible(filter.projectId);
    if (filter.appNames) {
      query.andWhere('f.app_name = ANY(CAST(:appNames AS text[]))', { appNames: filter.appNames });
    }
    if (filter.functionNames) {
      query.andWhere('f.name = ANY(CAST(:functionNames AS text[]))', { functionNames: filter.functionNames });
    }
    // Byte order, so that pages are the same on every database whatever its default collation.
    query.orderBy('f.name COLLATE "C"', 'ASC');
    if (filter.limit !== undefined) {
      query.offset(filter.offset ?? 0).limit(filter.limit);
    }
    return query.getMany();
  }

  findVisibleByName(name: string, projectId: string): Promise<FunctionEntity | null> {
    return this.visible(projectId).andWhere('f.name = :name', { name }).getOne();
  }

  /** Visible functions matching the filters, one page of them, by name. Intent searches are ranked by the search module. */
  async search(search: FunctionSearch): Promise<FunctionSummary[]> {
    const query = this.visible(search.projectId).select('f.name', 'name').addSelect('f.description', 'description');
    if (search.appNames?.length) {
      query.andWhere('f.app_name = ANY(CAST(:appNames AS text[]))', { appNames: search.appNames });
    }
    if (search.configuredOnly) {
      runnableIn(query, search.projectId);
    }
    // Byte order, so that pages are the same on every database whatever its default collation.
    query.addOrderBy('f.name COLLATE "C"', 'ASC');
    return query.offset(search.offset).limit(search.limit).getRawMany<FunctionSummary>();
  }

  /**
   * Whole rows of the visible functions the project can run (its enabled configurations enable them),
   * by name, after `afterName` (keyset pagination), at most `limit`.
   */
  findRunnable(projectId: string, filter: RunnableFunctionFilter): Promise<FunctionEntity[]> {
    const query = runnableIn(this.visible(projectId), projectId);
    if (filter.appNames) {
      query.andWhere('f.app_name = ANY(CAST(:appNames AS text[]))', { appNames: filter.appNames });
    }
    if (filter.afterName !== undefined) {
      query.andWhere('f.name COLLATE "C" > :afterName', { afterName: filter.afterName });
    }
    return query.orderBy('f.name COLLATE "C"', 'ASC').limit(filter.limit).getMany();
  }

  private visible(projectId: string): SelectQueryBuilder<FunctionEntity> {
    return this.dataSource
      .getRepository(FunctionEntity)
      .createQueryBuilder('f')
      .innerJoin('apps', 'a', 'a.name = f.app_name')
      .where(VISIBLE, { projectId });
  }
}

/** Keeps the functions the project may run: an enabled configuration of the app that enables them. */
function runnableIn(query: SelectQueryBuilder<FunctionEntity>, projectId: string): SelectQueryBuilder<FunctionEntity> {
  return query.andWhere(configuredSql('f.app_name', runnableSql('c', 'f.name')), { projectId });
}
