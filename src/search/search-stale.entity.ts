import { Column, Entity, Generated, PrimaryColumn } from 'typeorm';

/**
 * What changed in the catalogue since the search index was last brought up to date, written by row
 * triggers on `apps` and `functions` whoever writes (import, another instance, plain SQL). Kinds:
 * `function` (its document), `app` (the app's document and those of all its functions, which
 * include the app's text), `app_context` (only the app's document, which includes its functions'
 * text) and `all` (after a TRUNCATE). A mark made again gets a new `seq`, so that clearing the marks
 * a refresh has processed never clears a newer one.
 */
@Entity('search_stale')
export class SearchStaleEntity {
  @PrimaryColumn('text')
  kind: 'function' | 'app' | 'app_context' | 'all';

  @PrimaryColumn('text')
  name: string;

  /** bigint: read as a string. */
  @Column('bigint')
  @Generated('increment')
  seq: string;
}
