import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import { AppEntity } from './app.entity.js';

export interface AppSearch {
  /** The caller project, for `configuredOnly`. */
  projectId: string;
  /** Already trimmed; absent or empty means "order by name". */
  intent?: string;
  configuredOnly: boolean;
  categories?: string[];
  limit: number;
  offset: number;
}

export type AppSummary = Pick<AppEntity, 'name' | 'description'>;

/** Queries over the catalogue's apps. "Visible" means public and active: anything else is invisible to the API. */
@Injectable()
export class AppsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findVisibleByName(name: string): Promise<AppEntity | null> {
    return this.dataSource.getRepository(AppEntity).findOneBy({ name, visibility: 'public', active: true });
  }

  /** Visible apps matching the filters, one page of them, in a stable order (relevance, then name). */
  async search(search: AppSearch): Promise<AppSummary[]> {
    const query = this.dataSource
      .getRepository(AppEntity)
      .createQueryBuilder('a')
      .select('a.name', 'name')
      .addSelect('a.description', 'description')
      .where(`a.visibility = 'public' AND a.active`);
    if (search.configuredOnly) {
      query.andWhere(
        (qb) =>
          `EXISTS ${qb
            .subQuery()
            .select('1')
            .from(AppConfigurationEntity, 'c')
            .where('c.app_name = a.name AND c.project_id = :projectId')
            .getQuery()}`,
        { projectId: search.projectId },
      );
    }
    if (search.categories?.length) {
      query.andWhere('a.categories && CAST(:categories AS text[])', { categories: search.categories });
    }
    if (search.intent) {
      this.orderByRelevance(query, search.intent);
    }
    // Byte order, so that pages are the same on every database whatever its default collation.
    query.addOrderBy('a.name COLLATE "C"', 'ASC');
    return query.offset(search.offset).limit(search.limit).getRawMany<AppSummary>();
  }

  /**
   * First relevance ranking: PostgreSQL full-text search over name, display name, categories and
   * description, weighted in that order of importance, matching any word of the intent. Apps that
   * match no word are kept (rank 0, after the matches): agents take the first few results, and a
   * search that never comes back empty behaves like the vector similarity the contract describes.
   * The relevance issue replaces this method.
   */
  private orderByRelevance(query: SelectQueryBuilder<AppEntity>, intent: string): void {
    const document = `
      setweight(to_tsvector('english', replace(a.name, '_', ' ')), 'A') ||
      setweight(to_tsvector('english', a.display_name), 'A') ||
      setweight(to_tsvector('english', array_to_string(a.categories, ' ')), 'B') ||
      setweight(to_tsvector('english', a.description), 'C')`;
    // plainto_tsquery joins the words with AND; an OR lets partial matches rank instead of vanishing.
    // Lexemes never contain spaces, so the replacement only touches operators.
    const anyWord = `CAST(replace(CAST(plainto_tsquery('english', :intent) AS text), ' & ', ' | ') AS tsquery)`;
    query.setParameter('intent', intent).orderBy(`ts_rank(${document}, ${anyWord})`, 'DESC');
  }
}
