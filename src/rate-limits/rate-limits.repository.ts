import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface Spend {
  /** The database clock, in ms since the epoch. */
  now: number;
  /** The cell's new theoretical arrival time when the request was granted, else null. */
  granted: number | null;
  /** The cell's time before this request (null for a new cell). */
  previous: number | null;
}

@Injectable()
export class RateLimitsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * GCRA in one atomic statement: `count` requests (all or none; at most the limit, `windowMs / intervalMs`) advance
   * the cell by `count × intervalMs` if that leaves it at most `windowMs` ahead of now, else it is left as it was.
   * The row lock of ON CONFLICT serialises concurrent statements on every instance; the outer SELECT sees the cell
   * as it was before.
   */
  async spend(key: string, intervalMs: number, windowMs: number, count = 1): Promise<Spend> {
    const [row] = await this.dataSource.query<
      Array<{ now: number | string; granted: number | string | null; previous: number | string | null }>
    >(
      `WITH c AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::double precision AS now_ms),
       granted AS (
         INSERT INTO "rate_limits" AS r ("key", "tat_ms") SELECT $1, c.now_ms + $2 FROM c
         ON CONFLICT ("key") DO UPDATE SET "tat_ms" = GREATEST(r."tat_ms", EXCLUDED."tat_ms" - $2) + $2
           WHERE GREATEST(r."tat_ms", EXCLUDED."tat_ms" - $2) + $2 <= EXCLUDED."tat_ms" - $2 + $3
         RETURNING "tat_ms"
       )
       SELECT c.now_ms AS now, (SELECT "tat_ms" FROM granted) AS granted,
              (SELECT "tat_ms" FROM "rate_limits" WHERE "key" = $1) AS previous
         FROM c`,
      [key, intervalMs * count, windowMs],
    );
    return {
      now: Number(row.now),
      granted: row.granted === null ? null : Number(row.granted),
      previous: row.previous === null ? null : Number(row.previous),
    };
  }

  /** Cells in the past are the same as no cell. */
  async deleteIdle(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM "rate_limits" WHERE "tat_ms" < (extract(epoch FROM clock_timestamp()) * 1000)::double precision`,
    );
  }
}
