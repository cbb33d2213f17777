import { Column, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { SearchField, SearchKind } from './search-document.js';

/**
 * The search index entry of one app or function: its text per field (ranked in memory, see
 * search-engine.ts), the text an embedding model reads, and the hash of that text.
 */
@Entity('search_documents')
export class SearchDocumentEntity {
  @PrimaryColumn('text')
  kind: SearchKind;

  @PrimaryColumn('text')
  name: string;

  @Index()
  @Column('text')
  app_name: string;

  @Column('jsonb')
  fields: Record<SearchField, string>;

  @Column('text')
  embedding_text: string;

  /** Hash of the fields and the embedding text: an embedding of another text is stale. */
  @Column('text')
  text_hash: string;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
