import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { FunctionEntity } from '../functions/function.entity.js';
import { AppEntity } from './app.entity.js';
import { configuredSql } from '../catalog-rules/runnable.js';
import { visibleSql, visibleToSql } from '../catalog-rules/visibility.js';

export interface AppSearch {
  /** The caller project, for `configuredOnly`. */
  projectId: string;
  configuredOnly: boolean;
  categories?: string[];
  limit: number;
  offset: number;
}

export type AppSummary = Pick<AppEntity, 'name' | 'description'>;

/** A function with its app row, as execution runs it. */
export type FunctionWithApp = FunctionEntity & { app: AppEntity };

/** Queries over the catalogue's apps. "Visible" to a project: public and active, or its own (visibility.ts). */
@Injectable()
export class AppsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findVisibleByName(name: string, projectId: string): Promise<AppEntity | null> {
    return this.dataSource
      .getRepository(AppEntity)
      .createQueryBuilder('a')
      .where(visibleToSql('a'), { projectId })
      .andWhere('a.name = :name', { name })
      .getOne();
  }

  /**
   * A function with its app row, as execution runs it (and caches it for every project): visible, or of an
   * active private app, which the caller shows only to the app's project (`isVisibleTo`).
   */
  findVisibleFunctionWithApp(name: string): Promise<FunctionWithApp | null> {
    return this.dataSource
      .getRepository(FunctionEntity)
      .createQueryBuilder('f')
      .innerJoinAndMapOne('f.app', AppEntity, 'a', 'a.name = f.app_name')
      .where(`${visibleSql('f')} AND a.active AND (a.visibility = 'public' OR a.project_id IS NOT NULL)`)
      .andWhere('f.name = :name', { name })
      .getOne() as Promise<FunctionWithApp | null>;
  }

  /** Visible apps, whole rows, by name: all of them or some by name, one page. */
  listVisible(filter: { projectId: string; appNames?: string[]; limit: number; offset: number }): Promise<AppEntity[]> {
    const query = this.dataSource
      .getRepository(AppEntity)
      .createQueryBuilder('a')
      .where(visibleToSql('a'), { projectId: filter.projectId });
    if (filter.appNames) {
      query.andWhere('a.name = ANY(CAST(:appNames AS text[]))', { appNames: filter.appNames });
    }
    // Byte order, so that pages are the same on every database whatever its default collation.
    return query.orderBy('a.name COLLATE "C"', 'ASC').offset(filter.offset).limit(filter.limit).getMany();
  }

  /** Visible apps matching the filters, one page of them, by name. Intent searches are ranked by the search module. */
  async search(search: AppSearch): Promise<AppSummary[]> {
    const query = this.dataSource
      .getRepository(AppEntity)
      .createQueryBuilder('a')
      .select('a.name', 'name')
      .addSelect('a.description', 'description')
      .where(visibleToSql('a'), { projectId: search.projectId });
    if (search.configuredOnly) {
      query.andWhere(configuredSql('a.name'), { projectId: search.projectId });
    }
    if (search.categories?.length) {
      query.andWhere('a.categories && CAST(:categories AS text[])', { categories: search.categories });
    }
    // Byte order, so that pages are the same on every database whatever its default collation.
    query.addOrderBy('a.name COLLATE "C"', 'ASC');
    return query.offset(search.offset).limit(search.limit).getRawMany<AppSummary>();
  }
}
