import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A counter per table, raised by a statement trigger on every write to that table. Each instance
 * polls the counters and drops its cached rows of a table whose counter moved, so that a change made
 * through another instance (or straight in SQL) reaches every instance's hot-path cache.
 */
@Entity('cache_generations')
export class CacheGenerationEntity {
  @PrimaryColumn('text')
  table_name: string;

  /** bigint: read as a string. */
  @Column('bigint', { default: 0 })
  generation: string;
}
