import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { collectGarbage } from '../../libs/common/src/index.js';
import { EMBEDDING_PROVIDER, type EmbeddingProvider } from './embeddings/embedding-provider.js';
import { analyseFields, SEARCH_FIELDS } from './search-document.js';
import { TermDictionary, TermStore } from './lexical-index.js';
import { EmbeddingTable } from './vector-index.js';
import {
  DEFAULT_ENGINE_OPTIONS,
  type EngineDocuments,
  SearchEngine,
  type Hit,
  type RankRequest,
} from './search-engine.js';
import { type ListedDocument, SearchRepository } from './search.repository.js';
import { SearchIndexWriter } from './search-index-writer.js';
import { lowerBound } from './sorted.js';
import { WORDNET } from './wordnet.provider.js';
import type { WordNet } from './wordnet.js';
import { Metrics } from '../observability/metrics.js';
import { Tracing } from '../observability/tracing.js';

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

/**
 * The documents of one kind as the in-memory index holds them (term ids and 8-bit vectors, not the
 * text), with the text hash they were analysed from: a reload reuses those whose hash is unchanged.
 */
interface LoadedDocuments extends EngineDocuments {
  /** SHA-256 text hashes, 32 bytes per document. */
  hashes: Buffer;
}

/** The text hashes are hex SHA-256. */
const HASH_BYTES = 32;

/** After a failed embedding run, searches try again at most this often. */
const EMBEDDING_RETRY_MS = 60_000;

/** Functions from which a load of the index ends with a full garbage collection (below, its garbage is a few MB). */
const COLLECT_AFTER_LOADING = 10_000;

/**
 * Keeps the search index in step with the catalogue and answers intent searches from memory.
 *
 * The database holds the index (documents, embeddings per model); this service makes it
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
  private loaded?: { apps: LoadedDocuments; functions: LoadedDocuments };
  private readonly dictionary = new TermDictionary();
  /** The refresh under way, and the one waiting to start after it (and whether it loads the engine). */
  private running?: Promise<void>;
  private queued?: Promise<void>;
  private queuedLoads = false;
  private embeddingsIncompleteSince?: number;

  constructor(
    private readonly repository: SearchRepository,
    private readonly writer: SearchIndexWriter,
    @Inject(EMBEDDING_PROVIDER) private readonly provider: EmbeddingProvider,
    @Inject(WORDNET) private readonly wordnet: WordNet | null,
    private readonly http: HttpAdapterHost,
    private readonly metrics: Metrics,
    private readonly tracing: Tracing,
  ) {}

  /** A search by intent, timed and traced (without the intent: it is the caller's input). */
  private observed<T>(kind: 'apps' | 'functions', search: () => Promise<T>): Promise<T> {
    if (!this.metrics.enabled && !this.tracing.enabled) {
      return search();
    }
    const started = performance.now();
    return this.tracing.span(`search ${kind}`, { 'patchbay.search.kind': kind }, search).finally(() => {
      this.metrics.search(kind, (performance.now() - started) / 1000);
    });
  }

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
    return this.observed('functions', () => this.rankFunctions(request));
  }

  private async rankFunctions(request: FunctionSearchRequest): Promise<Hit[]> {
    const [engine, runnable] = await Promise.all([
      this.current(),
      request.configuredOnly ? this.repository.runnableFunctions(request.projectId) : undefined,
    ]);
    return engine.rankFunctions(this.rankRequest(request), { appNames: request.appNames, runnable });
  }

  async searchApps(request: AppSearchRequest): Promise<Hit[] | undefined> {
    if (!SearchEngine.hasTerms(request.intent)) {
      return undefined;
    }
    return this.observed('apps', () => this.rankApps(request));
  }

  private async rankApps(request: AppSearchRequest): Promise<Hit[]> {
    const [engine, configured] = await Promise.all([
      this.current(),
      request.configuredOnly ? this.repository.configuredApps(request.projectId) : undefined,
    ]);
    return engine.rankApps(this.rankRequest(request), { categories: request.categories, configured });
  }

  /**
   * Brings the stored index and the in-memory one up to date with the catalogue as it is now. A run
   * already under way may have read the catalogue before the caller's writes, so the caller gets the
   * next run, which all callers arriving before it starts share. Called after every catalogue import,
   * and by searches when the catalogue moved.
   *
   * The in-memory engine is built only in a process that answers searches (the HTTP service, or one
   * that has searched already): a command-line import brings the stored index up to date and ends.
   * Building an engine nobody asks took 1 of the 14 s of GitHub's import, and grows with the catalogue.
   */
  refresh(options: { loadEngine?: boolean } = {}): Promise<void> {
    const loadEngine = options.loadEngine ?? (this.engine !== undefined || Boolean(this.http.httpAdapter));
    this.queuedLoads ||= loadEngine;
    if (this.queued) {
      return this.queued;
    }
    const before = this.running ?? Promise.resolve();
    const run: Promise<void> = before
      .catch(() => undefined)
      .then(() => {
        const load = this.queuedLoads;
        this.queued = undefined;
        this.queuedLoads = false;
        this.running = run;
        return this.doRefresh(load);
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
    this.wordnet?.close();
  }

  private rankRequest({ intent, offset, limit }: FunctionSearchRequest | AppSearchRequest): RankRequest {
    return { intent, vector: this.provider.embed(intent), offset, limit };
  }

  private async current(): Promise<SearchEngine> {
    const version = Number(await this.repository.catalogVersion());
    const retryEmbeddings =
      this.embeddingsIncompleteSince !== undefined && Date.now() - this.embeddingsIncompleteSince > EMBEDDING_RETRY_MS;
    if (retryEmbeddings) {
      await this.refresh({ loadEngine: true });
    }
    // A refresh already running may have started before the write this search must see: then one
    // more is needed. A refresh records the version it read first, so this ends after two at most.
    // One running with nothing queued after it is awaited first: it may well be recent enough (at
    // start, the first load), and loading a large catalogue twice in a row costs seconds.
    while (!this.engine || (this.engineVersion ?? -1) < version) {
      if (this.running && !this.queued) {
        await this.running.catch(() => undefined);
        if (this.engine && (this.engineVersion ?? -1) >= version) {
          break;
        }
      }
      await this.refresh({ loadEngine: true });
    }
    return this.engine;
  }

  private async doRefresh(loadEngine: boolean): Promise<void> {
    // Read first: a write landing during the refresh moves the version again and triggers another one.
    const version = Number(await this.repository.catalogVersion());
    const rewritten = await this.writer.rebuildStaleDocuments();
    const { complete, embedded } = await this.writer.embedMissing();
    this.embeddingsIncompleteSince = complete ? undefined : Date.now();
    if (rewritten + embedded > 0) {
      await this.repository.refreshStatistics();
    }
    if (loadEngine) {
      await this.loadEngine();
      this.engineVersion = version;
    }
  }

  /**
   * Builds a new engine from the stored index: documents whose text hash is unchanged are taken from
   * the engine in use, the others are read and analysed. Everything is read a page at a time into
   * arrays sized up front, so that loading a large catalogue leaves little garbage behind.
   */
  private async loadEngine(): Promise<void> {
    const listedApps: { categories: string[][] } = { categories: [] };
    const apps = await this.loadDocuments('app', this.loaded?.apps, (visit) =>
      this.repository.eachListedApp((row) => {
        visit(row);
        listedApps.categories.push(row.categories);
      }),
    );
    const appIds = new Map(apps.documents.names.map((name, id) => [name, id]));
    const functionApps: number[] = [];
    const functions = await this.loadDocuments('function', this.loaded?.functions, (visit) =>
      this.repository.eachListedFunction((row) => {
        visit(row);
        functionApps.push(appIds.get(row.app_name) ?? -1);
      }),
    );
    this.engine = new SearchEngine(
      { ...apps.documents, categories: Array.from(apps.order, (at) => listedApps.categories[at]) },
      { ...functions.documents, appIds: Int32Array.from(functions.order, (at) => functionApps[at]) },
      this.dictionary,
      {
        ...DEFAULT_ENGINE_OPTIONS,
        minSimilarity: this.provider.minSimilarity,
        wordnet: this.wordnet ?? undefined,
      },
    );
    this.loaded = { apps: apps.documents, functions: functions.documents };
    if (functions.documents.names.length >= COLLECT_AFTER_LOADING) {
      // The load's garbage (parsed texts, pages of rows) is collected now rather than left to grow the heap.
      collectGarbage();
    }
  }

  /**
   * The documents of one kind, sorted by name. `list` visits every stored document (with the facts
   * the caller collects alongside, in listing order); `order` maps each id to its listing position.
   */
  private async loadDocuments(
    kind: 'app' | 'function',
    previous: LoadedDocuments | undefined,
    list: (visit: (row: ListedDocument) => void) => Promise<void>,
  ): Promise<{ documents: LoadedDocuments; order: Int32Array }> {
    const listed: { name: string; hash: string; visible: boolean }[] = [];
    await list((row) => listed.push({ name: row.name, hash: row.text_hash, visible: row.visible }));
    // The database's collation may order names differently from the engine (UTF-16 code units).
    const order = Int32Array.from(listed.keys());
    order.sort((a, b) => (listed[a].name < listed[b].name ? -1 : listed[a].name > listed[b].name ? 1 : 0));
    const count = order.length;
    const names = Array.from(order, (at) => listed[at].name);
    const hashes = Buffer.alloc(count * HASH_BYTES);
    const visible = new Uint8Array(count);
    const descriptions: string[] = new Array<string>(count).fill('');
    const store = new TermStore(SEARCH_FIELDS.length);
    const empty = store.add(new Int32Array(SEARCH_FIELDS.length));
    const handles = new Uint32Array(count).fill(empty);
    const vectors = new EmbeddingTable(count);
    const unchanged = new Uint8Array(count);
    order.forEach((at, id) => {
      hashes.write(listed[at].hash, id * HASH_BYTES, 'hex');
      visible[id] = listed[at].visible ? 1 : 0;
      const before = previous ? findName(previous.names, names[id]) : -1;
      if (
        previous &&
        before >= 0 &&
        previous.hashes.compare(
          hashes,
          id * HASH_BYTES,
          (id + 1) * HASH_BYTES,
          before * HASH_BYTES,
          (before + 1) * HASH_BYTES,
        ) === 0
      ) {
        unchanged[id] = 1;
        descriptions[id] = previous.descriptions[before];
        handles[id] = store.add(previous.terms.terms(before));
        vectors.copy(id, previous.vectors, before);
      }
    });
    listed.length = 0;
    const changed = names.filter((_, id) => !unchanged[id]);
    await this.repository.eachDocumentText(kind, changed.length === count ? 'all' : changed, (doc) => {
      const id = findName(names, doc.name);
      if (id < 0) {
        return;
      }
      const analysed = analyseFields(doc.fields);
      handles[id] = store.add(this.dictionary.pack(SEARCH_FIELDS.map((field) => analysed[field])));
      descriptions[id] = doc.description;
      // The text may have changed since the listing: the hash is that of the text analysed.
      hashes.write(doc.text_hash, id * HASH_BYTES, 'hex');
    });
    store.seal();
    // Vectors of the documents that have none: all on the first load, else the changed ones.
    const needVectors = names.filter((_, id) => !vectors.has(id));
    if (needVectors.length > 0) {
      await this.repository.eachEmbedding(
        this.provider.model,
        kind,
        needVectors.length === count ? 'all' : needVectors,
        (row) => {
          const id = findName(names, row.name);
          if (id >= 0 && hashes.toString('hex', id * HASH_BYTES, (id + 1) * HASH_BYTES) === row.text_hash) {
            vectors.set(id, row.embedding);
          }
        },
      );
    }
    return { documents: { names, descriptions, visible, terms: store.source(handles), vectors, hashes }, order };
  }
}

/** Id of `name` in a sorted list, or -1. */
function findName(names: readonly string[], name: string): number {
  const lo = lowerBound(names, name);
  return lo < names.length && names[lo] === name ? lo : -1;
}
