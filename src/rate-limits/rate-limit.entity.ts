import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One GCRA cell per limited subject (an API key, an MCP token, a client address): its theoretical
 * arrival time. UNLOGGED in the migration: a crash forgets the cells (limits start afresh), and
 * writing them costs no write-ahead log.
 */
@Entity('rate_limits')
export class RateLimitEntity {
  @PrimaryColumn('text')
  key: string;

  /** Milliseconds since the epoch, on the database's clock (one clock for every instance). */
  @Column('double precision')
  tat_ms: number;
}
