import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '../config/app-config.js';
import { EMBEDDING_PROVIDER, type EmbeddingProvider } from './embeddings/embedding-provider.js';
import {
  analyseFields,
  appDocument,
  functionDocument,
  type AppText,
  type FunctionSummaryText,
  type SearchDocument,
  SEARCH_FIELDS,
} from './search-document.js';
import { type PackedTerms, TermDictionary } from './lexical-index.js';
import { quantize, type QuantizedVector } from './vector-index.js';
import {
  DEFAULT_ENGINE_OPTIONS,
  SearchEngine,
  type EngineApp,
  type EngineFunction,
  type Hit,
  type RankRequest,
} from './search-engine.js';
import { type ItemKey, itemKey, SearchRepository, type StoredDocument } from './search.repository.js';
import { WORDNET } from './wordnet.provider.js';
import type { WordNet } from './wordnet.js';

export interface FunctionSearchRequest {
  projectId: string;
  intent: string;
  appNames?: string[];
  configuredOnly: boolean;
  limit: number;
  offset: number;
}

export interface AppSearchRequest {
  projectId: string;
  intent: string;
  categories?: string[];
  configuredOnly: boolean;
  limit: number;
  offset: number;
}

/** A document as the in-memory index holds it: term ids and an 8-bit vector, not the text. */
interface MemoryDocument {
  description: string;
  text_hash: string;
  terms: PackedTerms;
  embedding?: QuantizedVector;
}

/** Items whose documents are rebuilt per round when the catalogue changed. */
const REBUILD_BATCH = 2000;

/** After a failed embedding run, searches try again at most this often. */
const EMBEDDING_RETRY_MS = 60_000;

/**
 * Keeps the search index in step with the catalogue and answers intent searches from memory.
 *
 * The database holds the index (documents, tsvectors, embeddings per model); this service makes it
 * current — documents whose source rows changed are rebuilt, embeddings whose text or model changed
 * are recomputed, nothing else — and loads it into a `SearchEngine`. Every search first reads the
 * catalogue version that triggers raise on any write to apps or functions, so a write made anywhere
 * (import, another instance, plain SQL) is searchable on the next request.
 */
@Injectable()
export class SearchIndexService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Search');
  private engine?: SearchEngine;
  private engineVersion?: number;
  private memory = new Map<string, MemoryDocument>();
  private readonly dictionary = new TermDictionary();
  /** The refresh under way, and the one waiting to start after it. */
  private running?: Promise<void>;
  private queued?: Promise<void>;
  private embeddingsIncompleteSince?: number;

  constructor(
    private readonly repository: SearchRepository,
    private readonly config: AppConfig,
    @Inject(EMBEDDING_PROVIDER) private readonly provider: EmbeddingProvider,
    @Inject(WORDNET) private readonly wordnet: WordNet | null,
    private readonly http: HttpAdapterHost,
  ) {}

  /**
   * The HTTP service loads the index in the background as it starts, so that the first search does
   * not wait for it (on a 100k catalogue that takes tens of seconds). Command-line runs do not.
   */
  onApplicationBootstrap(): void {
    if (this.http.httpAdapter) {
      this.refresh().catch((error: unknown) =>
        this.logger.error(`Search index not loaded: ${(error as Error).message}`),
      );
    }
  }

  get embeddingModel(): string {
    return this.provider.model;
  }

  /** Results for an intent, or undefined when the intent has no searchable word (callers then order by name). */
  async searchFunctions(request: FunctionSearchRequest): Promise<Hit[] | undefined> {
    if (!SearchEngine.hasTerms(request.intent)) {
      return undefined;
    }
    // The intent is embedded while the index is checked: with a remote model that is a round trip.
    const [engine, runnable, rank] = await Promise.all([
      this.current(),
      request.configuredOnly ? this.repository.runnableFunctions(request.projectId) : undefined,
      this.rankRequest(request.intent, request.offset, request.limit),
    ]);
    return engine.rankFunctions(rank, { appNames: request.appNames, runnable });
  }

  async searchApps(request: AppSearchRequest): Promise<Hit[] | undefined> {
    if (!SearchEngine.hasTerms(request.intent)) {
      return undefined;
    }
    const [engine, configured, rank] = await Promise.all([
      this.current(),
      request.configuredOnly ? this.repository.configuredApps(request.projectId) : undefined,
      this.rankRequest(request.intent, request.offset, request.limit),
    ]);
    return engine.rankApps(rank, { categories: request.categories, configured });
  }

  /**
   * Brings the stored index and the in-memory one up to date with the catalogue as it is now. A run
   * already under way may have read the catalogue before the caller's writes, so the caller gets the
   * next run, which all callers arriving before it starts share. Called after every catalogue import,
   * and by searches when the catalogue moved.
   */
  refresh(): Promise<void> {
    if (this.queued) {
      return this.queued;
    }
    const before = this.running ?? Promise.resolve();
    const run: Promise<void> = before
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        this.running = run;
        return this.doRefresh();
      })
      .finally(() => {
        if (this.running === run) {
          this.running = undefined;
        }
      });
    this.queued = run;
    return run;
  }

  async onApplicationShutdown(): Promise<void> {
    await (this.queued ?? this.running)?.catch(() => undefined);
    await this.provider.close?.();
    this.wordnet?.close();
  }

  private async rankRequest(intent: string, offset: number, limit: number): Promise<RankRequest> {
    const mode = this.config.SEARCH_RANKING;
    let vector: Float32Array | undefined;
    if (mode === 'hybrid' || mode === 'vector') {
      try {
        vector = await this.provider.embedQuery(intent);
      } catch (error) {
        // A search still answers, lexically, when the embeddings endpoint is down.
        this.logger.warn(`Intent not embedded, ranking without vectors: ${(error as Error).message}`);
      }
    }
    return { intent, vector, mode, offset, limit };
  }

  private async current(): Promise<SearchEngine> {
    const version = Number(await this.repository.catalogVersion());
    const retryEmbeddings =
      this.embeddingsIncompleteSince !== undefined && Date.now() - this.embeddingsIncompleteSince > EMBEDDING_RETRY_MS;
    if (retryEmbeddings) {
      await this.refresh();
    }
    // A refresh already running may have started before the write this search must see: then one
    // more is needed. A refresh records the version it read first, so this ends after two at most.
    while (!this.engine || (this.engineVersion ?? -1) < version) {
      await this.refresh();
    }
    return this.engine;
  }

  private async doRefresh(): Promise<void> {
    // Read first: a write landing during the refresh moves the version again and triggers another one.
    const version = Number(await this.repository.catalogVersion());
    await this.rebuildStaleDocuments();
    const complete = await this.embedMissing();
    this.embeddingsIncompleteSince = complete ? undefined : Date.now();
    await this.loadEngine();
    this.engineVersion = version;
  }

  /**
   * Rebuilds the documents the catalogue triggers marked stale, and drops those of deleted items:
   * a changed function rebuilds its document and its app's (which holds its functions' text), a
   * changed app rebuilds its document and its functions' (which hold the app's text).
   */
  private async rebuildStaleDocuments(): Promise<void> {
    const marks = await this.repository.staleMarks();
    if (marks.length === 0) {
      return;
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
      const functions = await this.repository.functionTexts(batch);
      await loadApps(functions.map((fn) => fn.app_name));
      const found = new Set(functions.map((fn) => fn.name));
      gone.push(...batch.filter((name) => !found.has(name)).map((name) => ({ kind: 'function' as const, name })));
      const documents = functions.flatMap((fn) => {
        const app = apps.get(fn.app_name);
        return app ? [functionDocument(fn, app)] : [];
      });
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
  }

  /** Embeds the documents that have no vector by the current model for their current text. */
  private async embedMissing(): Promise<boolean> {
    const pending = await this.repository.documentsToEmbed(this.provider.model);
    if (pending.length === 0) {
      return true;
    }
    const batch = Math.max(this.config.EMBEDDINGS_BATCH_SIZE * 8, 256);
    try {
      for (let i = 0; i < pending.length; i += batch) {
        const slice = pending.slice(i, i + batch);
        const vectors = await this.provider.embedDocuments(slice.map((item) => item.embedding_text));
        await this.repository.upsertEmbeddings(
          this.provider.model,
          slice.map((item, k) => ({
            kind: item.kind,
            name: item.name,
            text_hash: item.text_hash,
            embedding: vectors[k],
          })),
        );
      }
      this.logger.log(`Search index: ${pending.length} embeddings computed with ${this.provider.model}`);
      return true;
    } catch (error) {
      // Documents stay searchable lexically; the missing vectors are retried later.
      this.logger.warn(`Search index: embeddings incomplete (${(error as Error).message})`);
      return false;
    }
  }

  /** Updates the in-memory documents that differ from the stored ones, then builds a new engine. */
  private async loadEngine(): Promise<void> {
    const hashes = await this.repository.documentHashes();
    for (const key of [...this.memory.keys()]) {
      if (!hashes.has(key)) {
        this.memory.delete(key);
      }
    }
    const changed = [...hashes]
      .filter(([key, hash]) => this.memory.get(key)?.text_hash !== hash)
      .map(([key]) => parseKey(key));
    await this.repository.eachDocument(changed, (stored) => this.memory.set(itemKey(stored), this.toMemory(stored)));
    // Vectors of the documents that have none: all on the first load, else the changed ones.
    const needVectors = [...this.memory.entries()].filter(([, doc]) => !doc.embedding).map(([key]) => parseKey(key));
    await this.repository.eachEmbedding(this.provider.model, needVectors, (row) => {
      const doc = this.memory.get(itemKey(row));
      if (doc && doc.text_hash === row.text_hash) {
        doc.embedding = quantize(row.embedding);
      }
    });
    const [appFacts, functionFacts] = await Promise.all([this.repository.appFacts(), this.repository.functionFacts()]);
    const apps: EngineApp[] = [];
    for (const fact of appFacts) {
      const doc = this.memory.get(`app:${fact.name}`);
      if (doc) {
        apps.push({ ...fact, description: doc.description, terms: doc.terms, embedding: doc.embedding });
      }
    }
    const functions: EngineFunction[] = [];
    for (const fact of functionFacts) {
      const doc = this.memory.get(`function:${fact.name}`);
      if (doc) {
        functions.push({ ...fact, description: doc.description, terms: doc.terms, embedding: doc.embedding });
      }
    }
    this.engine = new SearchEngine(apps, functions, this.dictionary, {
      ...DEFAULT_ENGINE_OPTIONS,
      minSimilarity: this.provider.minSimilarity,
      wordnet: this.wordnet ?? undefined,
    });
  }

  private toMemory(stored: StoredDocument): MemoryDocument {
    const analysed = analyseFields(stored.fields);
    const terms = this.dictionary.pack(SEARCH_FIELDS.map((field) => analysed[field]));
    return { description: stored.fields.description, text_hash: stored.text_hash, terms };
  }
}

function parseKey(key: string): ItemKey {
  const cut = key.indexOf(':');
  return { kind: key.slice(0, cut) as ItemKey['kind'], name: key.slice(cut + 1) };
}
