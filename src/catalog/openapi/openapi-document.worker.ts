/**
 * Reads, validates, dereferences and maps OpenAPI documents on a thread of its own (see
 * openapi-reader.ts): the main thread receives only the checked records, while the document and its
 * expanded copies stay here, and reading the next document overlaps the main thread's writes.
 *
 * Messages, one request at a time: `load` a file (answers `loaded` with the app name its title
 * gives, or `refused`), then `map` it under the app name the import chose (answers `mapped` with the
 * app record once every record is made and checked, or `refused`), then `functions` until a batch
 * is the last (each answers the next batch of function records). `failed` reports an unexpected
 * error. Every answer gives the heap size.
 */
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import {
  checkAppRecord,
  checkFunctionRecord,
  functionRecord,
  type CatalogProblem,
  type FunctionRecord,
  type LoadedApp,
} from '../catalog-files.js';
import {
  documentAppName,
  mapOpenApiDocument,
  OpenApiRefusal,
  type OpenApiMappingOptions,
  type SkippedOperation,
} from './openapi-mapping.js';
import { packRecords, transferList, type RecordBatch } from './openapi-record-batches.js';
import { loadOpenApiDocument } from './openapi-source.js';

export type ReaderRequest =
  | { type: 'load'; file: string; validate: boolean; appName?: string }
  | {
      type: 'map';
      appName: string;
      previousNames: [string, string][];
      options: Omit<OpenApiMappingOptions, 'previousNames' | 'appName'>;
      secrets: Record<string, string | undefined>;
    }
  | { type: 'functions' };

/** A mapped and checked document; its function records follow, in batches. */
export interface MappedDocument {
  loaded: Omit<LoadedApp, 'functions'>;
  /** How many functions. */
  functions: number;
  skipped: SkippedOperation[];
  reduced: SkippedOperation[];
  notes: string[];
}

type ReaderReply =
  | { type: 'loaded'; baseName: string }
  | { type: 'mapped'; mapped: MappedDocument }
  | { type: 'functions'; batch: RecordBatch; last: boolean }
  | { type: 'refused'; reason: string }
  | { type: 'failed'; message: string };

/** A reply, and the thread's heap size after it (MB). */
export type ReaderAnswer = ReaderReply & { heapMb: number };

/**
 * A batch ends at this many functions or once its rows reach this many bytes (a larger row goes
 * whole): the main thread holds about two batches at a time, the one it writes and the next.
 */
const BATCH_FUNCTIONS = 1000;
const BATCH_BYTES = 8 * 1024 * 1024;

const port = parentPort;
if (!port) {
  throw new Error('openapi-document.worker runs as a worker thread');
}

/** The document loaded and not yet mapped, or the records of the mapped one not yet handed over. */
let current:
  | { file: string; document: Record<string, unknown> }
  | { records: (FunctionRecord | undefined)[]; next: number }
  | undefined;

function answer(message: ReaderReply): void {
  port?.postMessage(
    { ...message, heapMb: Math.round(getHeapStatistics().total_heap_size / 1048576) },
    message.type === 'functions' ? transferList(message.batch) : [],
  );
}

async function handle(request: ReaderRequest): Promise<ReaderReply> {
  if (request.type === 'load') {
    current = undefined;
    const { document } = await loadOpenApiDocument(request.file, { validate: request.validate });
    current = { file: request.file, document };
    return { type: 'loaded', baseName: documentAppName(document, request.appName) };
  }
  if (request.type === 'functions') {
    return nextBatch();
  }
  const loadedDocument = current;
  current = undefined;
  if (!loadedDocument || !('document' in loadedDocument)) {
    throw new Error('map without a loaded document');
  }
  const { file, document } = loadedDocument;
  const appName = documentAppName(document, request.appName);
  const functionsFile = `${file} (functions)`;
  const problems: CatalogProblem[] = [];
  const refusedFunctions: SkippedOperation[] = [];
  // Each function is checked and made a record as soon as it is mapped, so that the functions with
  // their expanded schemas are never all held. A function the catalogue's rules refuse (an enum with
  // a repeated value, say) is skipped with the reason; the document's other operations are imported.
  const mapping = mapOpenApiDocument(
    document,
    { ...request.options, appName: request.appName, previousNames: new Map(request.previousNames) },
    (fn, index) => {
      const found = checkFunctionRecord(appName, fn, functionsFile, index);
      if (found.length > 0) {
        const protocol = fn.protocol_data as { method?: string; path?: string };
        refusedFunctions.push({
          operation: `${protocol.method ?? ''} ${protocol.path ?? fn.name}`,
          reason: `breaks the catalogue's rules: ${found
            .slice(0, 3)
            .map((p) => `${p.path.replace(/^\/\d+/, '')}: ${p.reason}`)
            .join('; ')}`,
        });
        return undefined;
      }
      return functionRecord(appName, fn);
    },
  );
  mapping.skipped.push(...refusedFunctions);
  if (mapping.functions.length === 0) {
    throw new OpenApiRefusal(
      `has no operation to import${mapping.skipped.length ? ` (${mapping.skipped.length} skipped: ${mapping.skipped[0].reason}…)` : ''}`,
    );
  }
  const app = checkAppRecord(mapping.app, { folder: file, appFile: `${file} (app)` }, request.secrets);
  problems.unshift(...app.problems);
  if (!app.checked || problems.length > 0) {
    throw new OpenApiRefusal(describeProblems(problems));
  }
  current = { records: mapping.functions, next: 0 };
  return {
    type: 'mapped',
    mapped: {
      loaded: app.checked,
      functions: mapping.functions.length,
      skipped: mapping.skipped,
      reduced: mapping.reduced,
      notes: mapping.notes,
    },
  };
}

/** The next batch of the mapped document's records, each let go here once in its batch. */
function nextBatch(): ReaderReply {
  const mapped = current;
  if (!mapped || !('records' in mapped)) {
    throw new Error('functions without a mapped document');
  }
  const batch: FunctionRecord[] = [];
  let bytes = 0;
  while (mapped.next < mapped.records.length && batch.length < BATCH_FUNCTIONS && bytes < BATCH_BYTES) {
    const record = mapped.records[mapped.next] as FunctionRecord;
    mapped.records[mapped.next] = undefined;
    mapped.next += 1;
    batch.push(record);
    bytes += record.row.length;
  }
  const last = mapped.next === mapped.records.length;
  if (last) {
    current = undefined;
  }
  return { type: 'functions', batch: packRecords(batch), last };
}

port.on('message', (request: ReaderRequest) => {
  handle(request).then(answer, (error: unknown) => {
    if (error instanceof OpenApiRefusal) {
      answer({ type: 'refused', reason: error.message });
    } else {
      answer({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  });
});

function describeProblems(problems: CatalogProblem[]): string {
  const first = problems
    .slice(0, 3)
    .map((p) => `${p.path}: ${p.reason}`)
    .join('; ');
  return `generated records break the catalogue's rules (${problems.length}): ${first}`;
}
