import { Inject, Injectable, Logger } from '@nestjs/common';
import { EMBEDDING_PROVIDER, type EmbeddingProvider } from './embeddings/embedding-provider.js';
import {
  appDocument,
  functionDocument,
  type AppText,
  type FunctionSummaryText,
  type SearchDocument,
} from './search-document.js';
import { type ItemKey, SearchRepository } from './search.repository.js';

/** Items whose documents are rebuilt per round when the catalogue changed. */
const REBUILD_BATCH = 2000;

/**
 * Documents embedded per round, each round's vectors stored before the next are computed: a first
 * embedding of a large catalogue that stops keeps what it did. 512 is what the removed
 * EMBEDDINGS_BATCH_SIZE gave by default (64 × 8), unchanged.
 */
const EMBED_BATCH = 512;

/**
 * Keeps the stored index (documents and embeddings) in step with the catalogue: documents whose
 * source rows changed are rebuilt, embeddings whose text or model changed are recomputed, nothing else.
 */
@Injectable()
export class SearchIndexWriter {
  private readonly logger = new Logger('Search');

  constructor(
    private readonly repository: SearchRepository,
    @Inject(EMBEDDING_PROVIDER) private readonly provider: EmbeddingProvider,
  ) {}

  /**
   * Rebuilds the documents the catalogue triggers marked stale, and drops those of deleted items:
   * a changed function rebuilds its document and its app's (which holds its functions' text), a
   * changed app rebuilds its document and its functions' (which hold the app's text).
   */
  async rebuildStaleDocuments(): Promise<number> {
    const marks = await this.repository.staleMarks();
    if (marks.length === 0) {
      return 0;
    }
    const upTo = marks.reduce((max, mark) => (BigInt(mark.seq) > BigInt(max) ? mark.seq : max), '0');
    const functionNames = new Set<string>();
    const appNames = new Set<string>();
    if (marks.some((mark) => mark.kind === 'all')) {
      await this.repository.deleteOrphanDocuments();
      const all = await this.repository.allNames();
      all.apps.forEach((name) => appNames.add(name));
      all.functions.forEach((name) => functionNames.add(name));
    } else {
      const changedApps = marks.filter((mark) => mark.kind === 'app').map((mark) => mark.name);
      for (const mark of marks) {
        (mark.kind === 'function' ? functionNames : appNames).add(mark.name);
      }
      for (const name of await this.repository.functionNamesOfApps(changedApps)) {
        functionNames.add(name);
      }
    }
    // In batches: on a large catalogue the texts (parameter schemas included) are never held whole.
    const apps = new Map<string, AppText>();
    const loadApps = async (names: Iterable<string>) => {
      const missing = [...new Set(names)].filter((name) => !apps.has(name));
      for (const app of await this.repository.appTexts(missing)) {
        apps.set(app.name, app);
      }
    };
    const gone: ItemKey[] = [];
    let rebuilt = 0;
    const functionList = [...functionNames];
    for (let i = 0; i < functionList.length; i += REBUILD_BATCH) {
      const batch = functionList.slice(i, i + REBUILD_BATCH);
      const found = new Set<string>();
      const documents: SearchDocument[] = [];
      for await (const functions of this.repository.functionTexts(batch)) {
        await loadApps(functions.map((fn) => fn.app_name));
        for (const fn of functions) {
          found.add(fn.name);
          const app = apps.get(fn.app_name);
          if (app) {
            documents.push(functionDocument(fn, app));
          }
        }
      }
      gone.push(...batch.filter((name) => !found.has(name)).map((name) => ({ kind: 'function' as const, name })));
      await this.repository.upsertDocuments(documents);
      rebuilt += documents.length;
    }
    const appList = [...appNames];
    for (let i = 0; i < appList.length; i += REBUILD_BATCH / 4) {
      const batch = appList.slice(i, i + REBUILD_BATCH / 4);
      await loadApps(batch);
      const summaries = new Map<string, FunctionSummaryText[]>();
      for (const fn of await this.repository.functionSummariesOfApps(batch)) {
        const list = summaries.get(fn.app_name) ?? [];
        list.push(fn);
        summaries.set(fn.app_name, list);
      }
      const documents: SearchDocument[] = [];
      for (const name of batch) {
        const app = apps.get(name);
        if (app) {
          documents.push(appDocument(app, summaries.get(name) ?? []));
        } else {
          gone.push({ kind: 'app', name });
        }
      }
      await this.repository.upsertDocuments(documents);
      rebuilt += documents.length;
    }
    await this.repository.deleteDocuments(gone);
    await this.repository.clearStaleMarks(upTo);
    this.logger.log(`Search index: ${rebuilt} documents rebuilt, ${gone.length} removed`);
    return rebuilt + gone.length;
  }

  /**
   * Embeds the documents that have no vector by the current model for their current text: whether
   * none is left missing, and how many were stored.
   */
  async embedMissing(): Promise<{ complete: boolean; embedded: number }> {
    const pending = await this.repository.documentsToEmbed(this.provider.model);
    if (pending.length === 0) {
      return { complete: true, embedded: 0 };
    }
    let embedded = 0;
    try {
      for (let i = 0; i < pending.length; i += EMBED_BATCH) {
        const slice = pending.slice(i, i + EMBED_BATCH);
        await this.repository.upsertEmbeddings(
          this.provider.model,
          slice.map((item) => ({
            kind: item.kind,
            name: item.name,
            text_hash: item.text_hash,
            embedding: this.provider.embed(item.embedding_text),
          })),
        );
        embedded += slice.length;
      }
      this.logger.log(`Search index: ${pending.length} embeddings computed with ${this.provider.model}`);
      return { complete: true, embedded };
    } catch (error) {
      // Documents stay searchable lexically; the missing vectors are retried later.
      this.logger.warn(`Search index: embeddings incomplete (${(error as Error).message})`);
      return { complete: false, embedded };
    }
  }
}
