import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { chunksByBytes } from '../../libs/common/src/index.js';
import type {
  AppText,
  FunctionSummaryText,
  FunctionText,
  SearchDocument,
  SearchField,
  SearchKind,
} from './search-document.js';
import { configurationEnabledSql, type FunctionEnablement } from '../catalog-rules/runnable.js';
import { visibleSql } from '../catalog-rules/visibility.js';

/** Rows per multi-row statement (PostgreSQL allows 65535 parameters in one). */
const CHUNK = 400;
/** Rows per read of a large table. */
const READ_PAGE = 2000;
/**
 * Bytes of parameter schemas as stored (compressed: their JSON is 2.7–4.4 times larger in the
 * large OpenAPI imports) per page of function texts.
 */
const TEXT_PAGE_BYTES = 4 * 1024 * 1024;
/**
 * Rows per page of the scans that load the in-memory index, by row size: a page is all that is held
 * at once (on the embedded database, also what its WebAssembly memory has to grow to).
 */
const LIST_PAGE = 5000;
const TEXT_PAGE = 500;
const EMBEDDING_PAGE = 2000;

export interface ItemKey {
  kind: SearchKind;
  name: string;
}

export interface StaleMark {
  kind: 'function' | 'app' | 'app_context' | 'all';
  name: string;
  /** bigint, as a string. */
  seq: string;
}

/** What the in-memory index needs of a stored document, without its text. */
export interface ListedDocument {
  name: string;
  text_hash: string;
  /** Public and active. */
  visible: boolean;
}

export interface ListedApp extends ListedDocument {
  categories: string[];
}

export interface ListedFunction extends ListedDocument {
  app_name: string;
}

export interface StoredDocument {
  name: string;
  fields: Record<SearchField, string>;
  /** The description field, as its own string (not a part of the fields' JSON, which it would keep alive). */
  description: string;
  text_hash: string;
}

export interface StoredEmbedding {
  name: string;
  text_hash: string;
  /** Valid only during the visit: the array is reused for the next row. */
  embedding: Float32Array;
}

/** The search index tables, and the catalogue facts the in-memory index needs. */
@Injectable()
export class SearchRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The counter that triggers raise on every write to apps or functions. */
  async catalogVersion(): Promise<string> {
    const rows: { version: string }[] = await this.dataSource.query(
      `SELECT "version" FROM "search_catalog_version" WHERE "id" = 1`,
    );
    return rows[0]?.version ?? '0';
  }

  /** The marks the catalogue triggers left since the last refresh (see SearchStaleEntity). */
  staleMarks(): Promise<StaleMark[]> {
    return this.dataSource.query(`SELECT kind, name, seq FROM search_stale`);
  }

  /** The planner's statistics of the index tables, after a refresh wrote to them (see CatalogRepository.refreshStatistics). */
  async refreshStatistics(): Promise<void> {
    await this.dataSource.query('ANALYZE search_documents, search_embeddings, search_stale');
  }

  /** Clears the marks a refresh has processed; a mark made again since has a higher seq and stays. */
  async clearStaleMarks(upTo: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM search_stale WHERE seq <= $1`, [upTo]);
  }

  async allNames(): Promise<{ apps: string[]; functions: string[] }> {
    const rows: ItemKey[] = await this.dataSource.query(
      `SELECT 'app' AS kind, name FROM apps UNION ALL SELECT 'function' AS kind, name FROM functions`,
    );
    return {
      apps: rows.filter((row) => row.kind === 'app').map((row) => row.name),
      functions: rows.filter((row) => row.kind === 'function').map((row) => row.name),
    };
  }

  async functionNamesOfApps(appNames: string[]): Promise<string[]> {
    if (appNames.length === 0) {
      return [];
    }
    const rows: { name: string }[] = await this.dataSource.query(
      `SELECT name FROM functions WHERE app_name = ANY($1::text[])`,
      [appNames],
    );
    return rows.map((row) => row.name);
  }

  /** Drops the documents (and their embeddings) of apps and functions that no longer exist. */
  async deleteOrphanDocuments(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM search_documents d
        WHERE (d.kind = 'function' AND NOT EXISTS (SELECT 1 FROM functions f WHERE f.name = d.name))
           OR (d.kind = 'app' AND NOT EXISTS (SELECT 1 FROM apps a WHERE a.name = d.name))`,
    );
  }

  async deleteDocuments(keys: ItemKey[]): Promise<void> {
    for (const kind of ['app', 'function'] as const) {
      const names = keys.filter((key) => key.kind === kind).map((key) => key.name);
      if (names.length > 0) {
        await this.dataSource.query(`DELETE FROM search_documents WHERE kind = $1 AND name = ANY($2::text[])`, [
          kind,
          names,
        ]);
      }
    }
  }

  async appTexts(names: string[]): Promise<AppText[]> {
    if (names.length === 0) {
      return [];
    }
    return this.dataSource.query(
      `SELECT name, display_name, description, categories FROM apps WHERE name = ANY($1::text[])`,
      [names],
    );
  }

  /**
   * The texts of the named functions, a page at a time: at most READ_PAGE functions and
   * TEXT_PAGE_BYTES of parameter schemas as stored (a larger one alone). A page is read whole, its
   * schemas as objects: DocuSign's 399 functions (174 MB of schemas as JSON, 40 MB as stored) took
   * 385–443 MB of heap read as one page, which made the peak of the import of the whole APIs.guru directory.
   */
  async *functionTexts(names: string[]): AsyncGenerator<FunctionText[]> {
    for (let i = 0; i < names.length; i += READ_PAGE) {
      const sizes: { name: string; bytes: number }[] = await this.dataSource.query(
        `SELECT name, pg_column_size(parameters) AS bytes FROM functions WHERE name = ANY($1::text[])`,
        [names.slice(i, i + READ_PAGE)],
      );
      for (const page of chunksByBytes(sizes, (row) => row.bytes, TEXT_PAGE_BYTES, READ_PAGE)) {
        yield await this.dataSource.query(
          `SELECT name, app_name, description, tags, parameters, protocol_data FROM functions WHERE name = ANY($1::text[])`,
          [page.map((row) => row.name)],
        );
      }
    }
  }

  /** Name, description and tags of every function of the given apps (for the apps' documents). */
  async functionSummariesOfApps(appNames: string[]): Promise<(FunctionSummaryText & { app_name: string })[]> {
    if (appNames.length === 0) {
      return [];
    }
    return this.dataSource.query(
      `SELECT name, app_name, description, tags FROM functions WHERE app_name = ANY($1::text[]) ORDER BY name COLLATE "C"`,
      [appNames],
    );
  }

  /** Writes documents (their fields, embedding text and hash). */
  async upsertDocuments(documents: SearchDocument[]): Promise<void> {
    for (let i = 0; i < documents.length; i += CHUNK) {
      const chunk = documents.slice(i, i + CHUNK);
      const params: unknown[] = [];
      const rows = chunk.map((doc) => {
        params.push(doc.kind, doc.name, doc.app_name, JSON.stringify(doc.fields), doc.embedding_text, doc.text_hash);
        const p = (k: number) => `$${params.length - 6 + k}`;
        return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}::jsonb, ${p(5)}, ${p(6)}, now())`;
      });
      await this.dataSource.query(
        `INSERT INTO search_documents (kind, name, app_name, fields, embedding_text, text_hash, updated_at)
         VALUES ${rows.join(', ')}
         ON CONFLICT (kind, name) DO UPDATE SET app_name = EXCLUDED.app_name, fields = EXCLUDED.fields,
           embedding_text = EXCLUDED.embedding_text, text_hash = EXCLUDED.text_hash,
           updated_at = now()`,
        params,
      );
    }
  }

  /** Documents without an embedding by `model` for their current text. */
  documentsToEmbed(model: string): Promise<(ItemKey & { embedding_text: string; text_hash: string })[]> {
    return this.dataSource.query(
      `SELECT d.kind, d.name, d.embedding_text, d.text_hash FROM search_documents d
         LEFT JOIN search_embeddings e ON e.kind = d.kind AND e.name = d.name AND e.model = $1
        WHERE e.text_hash IS DISTINCT FROM d.text_hash
        ORDER BY d.kind, d.name COLLATE "C"`,
      [model],
    );
  }

  async upsertEmbeddings(
    model: string,
    rows: (ItemKey & { text_hash: string; embedding: Float32Array })[],
  ): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      const params: unknown[] = [];
      const values = rows.slice(i, i + CHUNK).map((row) => {
        params.push(row.kind, row.name, model, row.text_hash, row.embedding.length, vectorLiteral(row.embedding));
        const n = params.length;
        return `($${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n}::vector)`;
      });
      await this.dataSource.query(
        `INSERT INTO search_embeddings (kind, name, model, text_hash, dimensions, embedding) VALUES ${values.join(', ')}
         ON CONFLICT (kind, name, model) DO UPDATE SET text_hash = EXCLUDED.text_hash,
           dimensions = EXCLUDED.dimensions, embedding = EXCLUDED.embedding, created_at = now()`,
        params,
      );
    }
  }

  /** Every app document with what filters need of the app, page by page in name order. */
  eachListedApp(visit: (row: ListedApp) => void): Promise<void> {
    return this.eachListed('app', 'apps', 'categories', visit);
  }

  /** Every function document with what filters need of the function, page by page in name order. */
  eachListedFunction(visit: (row: ListedFunction) => void): Promise<void> {
    return this.eachListed('function', 'functions', 'app_name', visit);
  }

  /**
   * The documents of one kind joined to their rows (`t`), with `column` of them and their visibility. The key
   * is given to both sides of the join: with `d.name` alone, a merge join read the apps (or functions) from the
   * first one on every page (at 98,700 functions, a page at 'M' read 46,800 rows: 480 ms against 249 ms with
   * both, and growing with the offset).
   */
  private eachListed<T extends ListedDocument>(
    kind: 'app' | 'function',
    table: 'apps' | 'functions',
    column: 'categories' | 'app_name',
    visit: (row: T) => void,
  ): Promise<void> {
    return this.scan(
      `SELECT d.name, d.text_hash, t.${column}, (${visibleSql('t')}) AS visible
         FROM search_documents d JOIN ${table} t ON t.name = d.name
        WHERE d.kind = '${kind}' AND d.name > $1 AND t.name > $1 ORDER BY d.name LIMIT $2`,
      [],
      LIST_PAGE,
      visit,
    );
  }

  /** The text of the given documents of one kind (or all of them), a page at a time. */
  async eachDocumentText(
    kind: SearchKind,
    names: readonly string[] | 'all',
    visit: (doc: StoredDocument) => void,
  ): Promise<void> {
    const columns = `name, text_hash, fields, fields->>'description' AS description`;
    if (names === 'all') {
      return this.scan(
        `SELECT ${columns} FROM search_documents WHERE kind = $1 AND name > $2 ORDER BY name LIMIT $3`,
        [kind],
        TEXT_PAGE,
        visit,
      );
    }
    for (let i = 0; i < names.length; i += TEXT_PAGE) {
      const page: StoredDocument[] = await this.dataSource.query(
        `SELECT ${columns} FROM search_documents WHERE kind = $1 AND name = ANY($2::text[])`,
        [kind, names.slice(i, i + TEXT_PAGE)],
      );
      page.forEach(visit);
    }
  }

  /**
   * Embeddings by `model` of the given documents of one kind (or all of them) that match their
   * current text (a stale one is never used), page by page, read in pgvector's binary form:
   * decoding bytes is much cheaper than parsing decimal text.
   */
  async eachEmbedding(
    model: string,
    kind: SearchKind,
    names: readonly string[] | 'all',
    visit: (row: StoredEmbedding) => void,
  ): Promise<void> {
    let scratch = new Float32Array(0);
    let bytes = Buffer.alloc(0);
    // pgvector's binary form: int16 dimensions, int16 unused, then big-endian float4 values. It comes
    // as base64 text, decoded into one buffer reused for every row: read as bytea, each row became a
    // Buffer of its own, and at 98,700 functions those left the process 50 MB larger once the load
    // was over (glibc's heap 123 MB against 75 MB; V8's own heap takes the strings back).
    const decode = (row: { name: string; text_hash: string; bytes: string | null }) => {
      if (!row.bytes) {
        return;
      }
      const size = Math.ceil((row.bytes.length * 3) / 4);
      if (bytes.length < size) {
        bytes = Buffer.alloc(Math.max(size, bytes.length * 2));
      }
      bytes.write(row.bytes, 'base64');
      const dimensions = bytes.readInt16BE(0);
      if (scratch.length !== dimensions) {
        scratch = new Float32Array(dimensions);
      }
      for (let i = 0; i < dimensions; i++) {
        scratch[i] = bytes.readFloatBE(4 + 4 * i);
      }
      visit({ name: row.name, text_hash: row.text_hash, embedding: scratch });
    };
    const query = `SELECT e.name, e.text_hash, encode(vector_send(e.embedding), 'base64') AS bytes
                     FROM search_embeddings e JOIN search_documents d ON d.kind = e.kind AND d.name = e.name
                    WHERE e.model = $1 AND e.kind = $2 AND e.text_hash = d.text_hash`;
    if (names === 'all') {
      // A page of the model's embeddings in key order, then each checked against its document's
      // current text (a stale one comes back without its bytes, so the page keeps its size and the
      // scan its key). Joined first and then sorted, the planner (estimating one row for the join,
      // as it cannot know the text hashes match) hashed both tables whole and sorted on disk for
      // every page: 1.6 s a page at 98,700 functions, about 75 of the 104 s the index took to load at
      // start, against 0.15 s a page this way (2026-11-28, embedded database).
      return this.scan(
        `SELECT e.name, e.text_hash, CASE WHEN d.name IS NULL THEN NULL ELSE encode(vector_send(e.embedding), 'base64') END AS bytes
           FROM (SELECT kind, name, text_hash, embedding FROM search_embeddings
                  WHERE model = $1 AND kind = $2 AND name > $3 ORDER BY name LIMIT $4) e
           LEFT JOIN search_documents d ON d.kind = e.kind AND d.name = e.name AND d.text_hash = e.text_hash
          ORDER BY e.name`,
        [model, kind],
        EMBEDDING_PAGE,
        decode,
      );
    }
    for (let i = 0; i < names.length; i += EMBEDDING_PAGE) {
      const page: { name: string; text_hash: string; bytes: string }[] = await this.dataSource.query(
        `${query} AND e.name = ANY($3::text[])`,
        [model, kind, names.slice(i, i + EMBEDDING_PAGE)],
      );
      page.forEach(decode);
    }
  }

  /**
   * Keyset pagination: `query` takes `params`, then the last name of the previous page and the page
   * size as its last two parameters, and orders by name. Only one page is ever held.
   */
  private async scan<T extends { name: string }>(
    query: string,
    params: unknown[],
    pageSize: number,
    visit: (row: T) => void,
  ): Promise<void> {
    let after = '';
    for (;;) {
      const page: T[] = await this.dataSource.query(query, [...params, after, pageSize]);
      page.forEach(visit);
      if (page.length < pageSize) {
        return;
      }
      after = page[page.length - 1].name;
    }
  }

  /** The apps a project has configured (enabled or not). */
  async configuredApps(projectId: string): Promise<Set<string>> {
    const rows: { app_name: string }[] = await this.dataSource.query(
      `SELECT app_name FROM app_configurations WHERE project_id = $1`,
      [projectId],
    );
    return new Set(rows.map((row) => row.app_name));
  }

  /** Per app, the functions a project may run: its configuration is enabled and enables them. */
  async runnableFunctions(projectId: string): Promise<Map<string, FunctionEnablement>> {
    const rows: { app_name: string; all_functions_enabled: boolean; enabled_functions: string[] }[] =
      await this.dataSource.query(
        `SELECT app_name, all_functions_enabled, enabled_functions FROM app_configurations
          WHERE project_id = $1 AND ${configurationEnabledSql('app_configurations')}`,
        [projectId],
      );
    return new Map(rows.map((row) => [row.app_name, row]));
  }
}

function vectorLiteral(vector: Float32Array): string {
  let out = '[';
  for (let i = 0; i < vector.length; i++) {
    out += (i ? ',' : '') + vector[i].toPrecision(7);
  }
  return `${out}]`;
}
