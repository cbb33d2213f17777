/**
 * Reads, validates, dereferences and maps OpenAPI documents on a thread of its own (see
 * openapi-reader.ts): the main thread receives only the checked records, while the document and its
 * expanded copies stay here, and reading the next document overlaps the main thread's writes.
 *
 * Messages, one request at a time: `load` a file (answers `loaded` with the app name its title
 * gives, or `refused`), then `map` it under the app name the import chose (answers `mapped` with the
 * records, or `refused`); `failed` reports an unexpected error. Every answer gives the heap size.
 */
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { checkAppRecords, type CatalogProblem, type LoadedApp } from '../catalog-files.js';
import {
  documentAppName,
  mapOpenApiDocument,
  OpenApiRefusal,
  type OpenApiMappingOptions,
  type SkippedOperation,
} from './openapi-mapping.js';
import { loadOpenApiDocument } from './openapi-source.js';

export type ReaderRequest =
  | { type: 'load'; file: string; validate: boolean; appName?: string }
  | {
      type: 'map';
      appName: string;
      previousNames: [string, string][];
      options: Omit<OpenApiMappingOptions, 'previousNames' | 'appName'>;
      secrets: Record<string, string | undefined>;
    };

export interface MappedDocument {
  loaded: LoadedApp;
  skipped: SkippedOperation[];
  notes: string[];
}

type ReaderReply =
  | { type: 'loaded'; baseName: string }
  | { type: 'mapped'; mapped: MappedDocument }
  | { type: 'refused'; reason: string }
  | { type: 'failed'; message: string };

/** A reply, and the thread's heap size after it (MB). */
export type ReaderAnswer = ReaderReply & { heapMb: number };

const port = parentPort;
if (!port) {
  throw new Error('openapi-document.worker runs as a worker thread');
}

let current: { file: string; document: Record<string, unknown> } | undefined;

function answer(message: ReaderReply): void {
  port?.postMessage({ ...message, heapMb: Math.round(getHeapStatistics().total_heap_size / 1048576) });
}

async function handle(request: ReaderRequest): Promise<ReaderReply> {
  if (request.type === 'load') {
    current = undefined;
    const { document } = await loadOpenApiDocument(request.file, { validate: request.validate });
    current = { file: request.file, document };
    return { type: 'loaded', baseName: documentAppName(document, request.appName) };
  }
  const loadedDocument = current;
  current = undefined;
  if (!loadedDocument) {
    throw new Error('map without a loaded document');
  }
  const { file, document } = loadedDocument;
  const mapping = mapOpenApiDocument(document, {
    ...request.options,
    appName: request.appName,
    previousNames: new Map(request.previousNames),
  });
  if (mapping.functions.length === 0) {
    throw new OpenApiRefusal(
      `has no operation to import${mapping.skipped.length ? ` (${mapping.skipped.length} skipped: ${mapping.skipped[0].reason}…)` : ''}`,
    );
  }
  const checked = checkAppRecords(
    mapping.app,
    mapping.functions,
    { folder: file, appFile: `${file} (app)`, functionsFile: `${file} (functions)` },
    request.secrets,
  );
  if (!checked.loaded || checked.problems.length > 0) {
    throw new OpenApiRefusal(describeProblems(checked.problems));
  }
  return { type: 'mapped', mapped: { loaded: checked.loaded, skipped: mapping.skipped, notes: mapping.notes } };
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
