import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import type { SearchKind } from './search-document.js';
import { SearchDocumentEntity } from './search-document.entity.js';

/**
 * The embedding of a search document by one model. The column is an untyped pgvector `vector`, so
 * models of any dimension live side by side; a vector is used only while its model is the configured
 * one and its text hash is the document's.
 */
@Entity('search_embeddings')
@Index(['model', 'kind'])
export class SearchEmbeddingEntity {
  @PrimaryColumn('text')
  kind: SearchKind;

  @PrimaryColumn('text')
  name: string;

  @PrimaryColumn('text')
  model: string;

  @ManyToOne(() => SearchDocumentEntity, { onDelete: 'CASCADE', onUpdate: 'CASCADE' })
  @JoinColumn([
    { name: 'kind', referencedColumnName: 'kind' },
    { name: 'name', referencedColumnName: 'name' },
  ])
  document?: Relation<SearchDocumentEntity>;

  /** The document's text hash when this vector was computed. */
  @Column('text')
  text_hash: string;

  @Column('integer')
  dimensions: number;

  @Column('vector')
  embedding: string;

  @CreateDateColumn({ type: 'timestamptz' })
  created_at: Date;
}
