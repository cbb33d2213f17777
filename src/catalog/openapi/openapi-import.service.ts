import { Injectable } from '@nestjs/common';
import { checkAppRecords, type CatalogProblem } from '../catalog-files.js';
import { CatalogService, type ChangeSummary } from '../catalog.service.js';
import { documentAppName, mapOpenApiDocument, OpenApiRefusal, type OpenApiMappingOptions } from './openapi-mapping.js';
import { loadOpenApiDocument, openApiFiles } from './openapi-source.js';

export interface OpenApiImportOptions extends Omit<OpenApiMappingOptions, 'previousNames'> {
  /** Values for the OAuth 2.0 client placeholders (`{{ APP_CLIENT_ID }}`, `{{ APP_CLIENT_SECRET }}`). */
  secrets: Record<string, string | undefined>;
  dryRun?: boolean;
  /** Off only for measurements: validation is the slowest step on very large documents. */
  validate?: boolean;
  onProgress?: (done: number, total: number) => void;
}

export interface ImportedDocument {
  file: string;
  app: string;
  functions: number;
  skipped: { operation: string; reason: string }[];
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
    let done = 0;
    for (const file of files) {
      try {
        await this.importFile(file, options, report, seenApps);
      } catch (error) {
        // A document the database refuses (a value it cannot store, a statement too slow) is refused
        // like any other; a database that no longer answers ends the import.
        const reason = error instanceof OpenApiRefusal ? error.message : await this.catalog.refusedRecords(error);
        if (reason === undefined) {
          throw error;
        }
        report.refused.push({ file, reason });
      }
      options.onProgress?.(++done, files.length);
    }
    if (!options.dryRun) {
      await this.catalog.refreshSearch(report);
    }
    return report;
  }

  private async importFile(
    file: string,
    options: OpenApiImportOptions,
    report: OpenApiImportReport,
    seenApps: Map<string, string>,
  ): Promise<void> {
    const { document } = await loadOpenApiDocument(file, { validate: options.validate });
    // Two documents of one import with the same title: the later ones get a numbered name.
    const base = documentAppName(document, options.appName);
    let appName = base;
    for (let n = 2; seenApps.has(appName); n += 1) {
      appName = `${base.slice(0, 18)}_${n}`;
    }
    const previousNames = await this.catalog.restFunctionNames(appName);
    const mapping = mapOpenApiDocument(document, { ...options, appName, previousNames });
    if (mapping.functions.length === 0) {
      throw new OpenApiRefusal(
        `has no operation to import${mapping.skipped.length ? ` (${mapping.skipped.length} skipped: ${mapping.skipped[0].reason}…)` : ''}`,
      );
    }
    const checked = checkAppRecords(
      mapping.app,
      mapping.functions,
      { folder: file, appFile: `${file} (app)`, functionsFile: `${file} (functions)` },
      options.secrets,
    );
    if (!checked.loaded || checked.problems.length > 0) {
      throw new OpenApiRefusal(describeProblems(checked.problems));
    }
    seenApps.set(appName, file);
    await this.catalog.writeApps([checked.loaded], report, { dryRun: options.dryRun });
    for (const item of checked.loaded.unfilled) {
      report.unfilled_placeholders.push({ app: appName, path: item.path, placeholder: item.placeholder });
    }
    report.documents.push({
      file,
      app: appName,
      functions: mapping.functions.length,
      skipped: mapping.skipped,
      notes: mapping.notes,
    });
  }
}

function describeProblems(problems: CatalogProblem[]): string {
  const first = problems
    .slice(0, 3)
    .map((p) => `${p.path}: ${p.reason}`)
    .join('; ');
  return `generated records break the catalogue's rules (${problems.length}): ${first}`;
}
