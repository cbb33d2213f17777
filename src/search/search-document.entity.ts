import { Column, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { SearchField, SearchKind } from './search-document.js';

/**
 * The search index entry of one app or function: its text per field, the weighted tsvector of those
 * fields (A: names, B: tags and categories, C: description, D: parameters and context), the text an
 * embedding model reads, and the hash of that text.
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

  /** GIN-indexed (in the migration; TypeORM cannot declare a GIN index). */
  @Index('IDX_search_documents_document', { synchronize: false })
  @Column('tsvector')
  document: string;

  @Column('text')
  embedding_text: string;

  /** Hash of the fields and the embedding text: an embedding of another text is stale. */
  @Column('text')
  text_hash: string;

  @UpdateDateColumn({ type: 'timestamptz' })
  updated_at: Date;
}
