import type { FindOptionsWhere, ObjectLiteral, QueryDeepPartialEntity, Repository } from 'typeorm';

/**
 * `UPDATE … SET <only these columns> WHERE … RETURNING *` as one statement: columns the caller does
 * not change are neither read nor written back, so a concurrent write to them (a token refresh, say)
 * survives. TypeORM's `save()` writes every column of the entity it was given; its `update()` cannot
 * return the row. The returned row is the entity as stored after the update, or null when no row
 * matched. Column names must equal property names (true of every entity here).
 */
export async function updateReturning<T extends ObjectLiteral>(
  repository: Repository<T>,
  where: FindOptionsWhere<T>,
  values: QueryDeepPartialEntity<T>,
): Promise<T | null> {
  const result = await repository.createQueryBuilder().update().set(values).where(where).returning('*').execute();
  const rows = result.raw as Record<string, unknown>[];
  return rows.length > 0 ? repository.create(rows[0] as T) : null;
}
