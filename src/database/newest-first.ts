import type { ObjectLiteral, Repository } from 'typeorm';

/** Which rows of a log a list operation asks for, and which page of them. */
export interface NewestFirstPage<T> {
  /** A column equal to each value given; an undefined value filters nothing. */
  equal: { [K in keyof T & string]?: T[K] };
  /** Created at or after. */
  since?: Date;
  /** Created before. */
  until?: Date;
  offset: number;
  limit: number;
}

/**
 * One project's rows of a log (executions, audit events) as its list operation pages them: newest first, rows
 * written at the same moment by id, newest first too. Column names come from the caller's code, never from a
 * request; the values are bound as parameters.
 */
export function newestFirst<T extends ObjectLiteral>(
  repository: Repository<T>,
  projectId: string,
  page: NewestFirstPage<T>,
): Promise<T[]> {
  const query = repository.createQueryBuilder('r').where('r.project_id = :projectId', { projectId });
  for (const [column, value] of Object.entries(page.equal)) {
    if (value !== undefined) {
      query.andWhere(`r.${column} = :${column}`, { [column]: value });
    }
  }
  if (page.since !== undefined) {
    query.andWhere('r.created_at >= :since', { since: page.since });
  }
  if (page.until !== undefined) {
    query.andWhere('r.created_at < :until', { until: page.until });
  }
  return query
    .orderBy('r.created_at', 'DESC')
    .addOrderBy('r.id', 'DESC')
    .offset(page.offset)
    .limit(page.limit)
    .getMany();
}
