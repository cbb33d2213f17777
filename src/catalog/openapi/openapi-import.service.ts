import { Injectable } from '@nestjs/common';
import { type Actor, CLI_ACTOR } from '../../audit/actor.js';
import { AppOwnedByProjectError } from '../catalog.errors.js';
import { CatalogService, type ChangeSummary } from '../catalog.service.js';
import type { MappedDocument } from './openapi-document.worker.js';
import { OpenApiRefusal, type OpenApiMappingOptions } from './openapi-mapping.js';
import { OpenApiReader } from './openapi-reader.js';
import { openApiFiles } from './openapi-files.js';

export interface OpenApiImportOptions extends Omit<OpenApiMappingOptions, 'previousNames'> {
  /** Values for the OAuth 2.0 client placeholders (`{{ APP_CLIENT_ID }}`, `{{ APP_CLIENT_SECRET }}`). */
  secrets: Record<string, string | undefined>;
  dryRun?: boolean;
  /** Off only for measurements: validation is the slowest step on very large documents. */
  validate?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** Who the audit log names: the command line unless said. */
  actor?: Actor;
}

export interface ImportedDocument {
  file: string;
  app: string;
  functions: number;
  skipped: { operation: string; reason: string }[];
  /** Operations imported in a reduced form, each with what was left out. */
  reduced: { operation: string; reason: string }[];
  notes: string[];
}

export interface OpenApiImportReport {
  dry_run: boolean;
  apps: ChangeSummary;
  functions: ChangeSummary;
  documents: ImportedDocument[];
  /** Documents not imported, each with its reason; the others were imported regardless. */
  refused: { file: string; reason: string }[];
  unfilled_placeholders: { app: string; path: string; placeholder: string }[];
}

/**
 * `patchbay catalog import-openapi`: every document becomes one app, checked by the same rules and
 * written by the same writer as the ACI-format import, in its own transaction — a refused document
 * leaves the others imported.
 */
@Injectable()
export class OpenApiImportService {
  constructor(private readonly catalog: CatalogService) {}

  async importSources(sources: string[], options: OpenApiImportOptions): Promise<OpenApiImportReport> {
    const report: OpenApiImportReport = {
      dry_run: Boolean(options.dryRun),
      apps: { added: [], updated: [], unchanged: 0 },
      functions: { added: [], updated: [], unchanged: 0 },
      documents: [],
      refused: [],
      unfilled_placeholders: [],
    };
    const files: string[] = [];
    for (const source of sources) {
      try {
        files.push(...openApiFiles(source));
      } catch (error) {
        report.refused.push({ file: source, reason: (error as Error).message });
      }
    }
    if (options.appName !== undefined && files.length > 1) {
      report.refused.push({ file: sources.join(' '), reason: '--app-name names one app: give one document' });
      return report;
    }
    const seenApps = new Map<string, string>();
    const reader = new OpenApiReader(READER_LIMITS);
    const validate = options.validate !== false;
    // The next document is read on the reader's thread while this one is written.
    let next = files.length > 0 ? settle(reader.load(files[0], validate, options.appName)) : undefined;
    try {
      for (const [index, file] of files.entries()) {
        const loading = next as Promise<Settled<string>>;
        next = undefined;
        try {
          await this.importFile(file, await loading, reader, options, report, seenApps, () => {
            next ??=
              index + 1 < files.length ? settle(reader.load(files[index + 1], validate, options.appName)) : undefined;
          });
        } catch (error) {
          // A document the database refuses (a value it cannot store, a statement too slow) is refused
          // like any other; a database that no longer answers ends the import.
          const reason =
            error instanceof OpenApiRefusal || error instanceof AppOwnedByProjectError
              ? error.message
              : await this.catalog.refusedRecords(error);
          if (reason === undefined) {
            throw error;
          }
          report.refused.push({ file, reason });
        }
        next ??=
          index + 1 < files.length ? settle(reader.load(files[index + 1], validate, options.appName)) : undefined;
        options.onProgress?.(index + 1, files.length);
      }
    } finally {
      await next;
      await reader.close();
    }
    if (!options.dryRun) {
      await this.catalog.refreshSearch(report);
    }
    return report;
  }

  /**
   * `readNext` starts reading the next document, once this one's records are out of the reader: its
   * function records are written a batch at a time as the reader hands them over, in the document's
   * transaction.
   */
  private async importFile(
    file: string,
    loading: Settled<string>,
    reader: OpenApiReader,
    options: OpenApiImportOptions,
    report: OpenApiImportReport,
    seenApps: Map<string, string>,
    readNext: () => void,
  ): Promise<void> {
    if ('error' in loading) {
      throw loading.error;
    }
    // Two documents of one import with the same title: the later ones get a numbered name.
    const base = loading.value;
    let appName = base;
    for (let n = 2; seenApps.has(appName); n += 1) {
      appName = `${base.slice(0, 18)}_${n}`;
    }
    const previousNames = await this.catalog.restFunctionNames(appName);
    const {
      secrets,
      dryRun: _dryRun,
      validate: _validate,
      onProgress: _onProgress,
      actor: _actor,
      ...mappingOptions
    } = options;
    let mapped: MappedDocument;
    try {
      mapped = await reader.map(appName, previousNames, mappingOptions, secrets);
    } catch (error) {
      readNext();
      throw error;
    }
    const { loaded } = mapped;
    seenApps.set(appName, file);
    await this.catalog.writeApps([{ ...loaded, functions: reader.functions(readNext) }], report, {
      dryRun: options.dryRun,
      // One record per document: each is written in its own transaction.
      audit: { actor: options.actor ?? CLI_ACTOR, source: 'openapi' },
    });
    for (const item of loaded.unfilled) {
      report.unfilled_placeholders.push({ app: appName, path: item.path, placeholder: item.placeholder });
    }
    report.documents.push({
      file,
      app: appName,
      functions: mapped.functions,
      skipped: mapped.skipped,
      reduced: mapped.reduced,
      notes: mapped.notes,
    });
  }
}

type Settled<T> = { value: T } | { error: unknown };

/** A promise that never rejects, so that one started ahead cannot go unhandled while it waits. */
function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/**
 * The reader thread is replaced once a document has left its heap over 300 MB (V8 keeps a grown heap
 * for good), and a document needing over 1 GB of heap is refused rather than taking the machine.
 */
const READER_LIMITS = { recycleHeapMb: 300, maxHeapMb: 1024 };
