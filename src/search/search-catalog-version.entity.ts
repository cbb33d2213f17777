import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row whose counter statement triggers on `apps` and `functions` raise on every write, however it
 * is made (import, another instance, plain SQL): a search compares it with the counter its in-memory
 * index was built at, and refreshes the index when it moved.
 */
@Entity('search_catalog_version')
export class SearchCatalogVersionEntity {
  @PrimaryColumn('integer')
  id: number;

  /** bigint: read as a string. */
  @Column('bigint', { default: 0 })
  version: string;
}
