import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { Injectable } from '@nestjs/common';
import { type EntityManager, QueryFailedError } from 'typeorm';
import { isDatabaseTimeout, SecretBox } from '../../libs/common/src/index.js';
import type { AppEntity, AppSecrets } from '../apps/app.entity.js';
import { type Actor, CLI_ACTOR } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import {
  appFolders,
  type CatalogProblem,
  type FunctionRecord,
  loadAppFolders,
  type LoadedApp,
} from './catalog-files.js';
import { AppOwnedByProjectError } from './catalog.errors.js';
import { CatalogRepository } from './catalog.repository.js';
import { SearchIndexService } from '../search/search-index.service.js';

export interface WriteOptions {
  dryRun?: boolean;
  onProgress?: (done: number, total: number) => void;
  /** The audit log's record of the write (`catalog.imported`); none when the caller records its own change. */
  audit?: { actor: Actor; source: 'app_folders' | 'openapi' };
  /** The project whose own app (added through /v1/mcp-servers) this write syncs; only it may write that app. */
  projectId?: string | null;
}

export interface ImportOptions extends Omit<WriteOptions, 'audit'> {
  /** Values for `{{ NAME }}` placeholders. */
  secrets: Record<string, string | undefined>;
  /** Who the audit log names: the command line unless said. */
  actor?: Actor;
}

export interface ChangeSummary {
  added: string[];
  updated: string[];
  unchanged: number;
}

/**
 * An app as the writer takes it, with its function records in batches: all in one (app folders), or
 * as they come (an OpenAPI document's, from the reader thread).
 */
export interface AppRecords extends Pick<LoadedApp, 'app' | 'appHash'> {
  functions: Iterable<FunctionRecord[]> | AsyncIterable<FunctionRecord[]>;
}

export interface ImportReport {
  dry_run: boolean;
  /** False when a problem was found: then nothing was written. */
  imported: boolean;
  apps: ChangeSummary;
  functions: ChangeSummary;
  problems: CatalogProblem[];
  /** Placeholders left without a value; the credential they stand for stays unset. */
  unfilled_placeholders: { app: string; path: string; placeholder: string }[];
}

@Injectable()
export class CatalogService {
  constructor(
    private readonly catalog: CatalogRepository,
    private readonly secretBox: SecretBox,
    private readonly searchIndex: SearchIndexService,
    private readonly changes: ChangeNotifications,
    private readonly audit: AuditService,
  ) {}

  /** Imports app folders (or folders of app folders): all of them, or — on any problem — none. */
  async importPaths(paths: string[], options: ImportOptions): Promise<ImportReport> {
    const report: ImportReport = {
      dry_run: Boolean(options.dryRun),
      imported: false,
      apps: { added: [], updated: [], unchanged: 0 },
      functions: { added: [], updated: [], unchanged: 0 },
      problems: [],
      unfilled_placeholders: [],
    };
    const folders: string[] = [];
    for (const path of paths) {
      try {
        folders.push(...appFolders(path));
      } catch (error) {
        report.problems.push({ file: path, path: '', reason: (error as Error).message });
      }
    }
    const { apps, problems } = loadAppFolders(folders, options.secrets);
    report.problems.push(...problems);
    for (const loaded of apps) {
      for (const item of loaded.unfilled) {
        report.unfilled_placeholders.push({ app: loaded.app.name, path: item.path, placeholder: item.placeholder });
      }
    }
    if (report.problems.length > 0) {
      return report;
    }
    await this.writeApps(
      apps.map((loaded) => ({ ...loaded, functions: [loaded.functions] })),
      report,
      { ...options, audit: { actor: options.actor ?? CLI_ACTOR, source: 'app_folders' } },
    );
    if (!options.dryRun) {
      await this.refreshSearch(report);
    }
    report.imported = !options.dryRun;
    return report;
  }

  /**
   * The one catalogue writer: compares the apps and their function records with the stored ones by
   * content hash as they come and upserts what changed in one transaction (nothing on a dry run),
   * counting into `report`. The search index is refreshed separately (refreshSearch), once per import.
   */
  async writeApps(
    apps: AppRecords[],
    report: Pick<ImportReport, 'apps' | 'functions'>,
    options: WriteOptions,
  ): Promise<void> {
    const appNames = apps.map((loaded) => loaded.app.name);
    // Two round trips at once: on the embedded database each costs 10–30 ms, and an OpenAPI import
    // writes one document at a time (1.2–2.6 s of the first 60 directory documents' import).
    const [knownApps, knownFunctions] = await Promise.all([
      this.catalog.appHashes(appNames),
      this.catalog.functionHashes(appNames),
    ]);
    const appRows: Partial<AppEntity>[] = [];
    // Counted into `report` once written: a write the database refuses leaves the report as it was.
    const counted: Pick<ImportReport, 'apps' | 'functions'> = {
      apps: { added: [], updated: [], unchanged: 0 },
      functions: { added: [], updated: [], unchanged: 0 },
    };
    for (const loaded of apps) {
      const owner = knownApps.get(loaded.app.name)?.projectId ?? null;
      if (owner !== null && owner !== (options.projectId ?? null)) {
        throw new AppOwnedByProjectError(loaded.app.name);
      }
    }
    for (const loaded of apps) {
      const appName = loaded.app.name;
      const known = knownApps.get(appName)?.hash;
      if (known === loaded.appHash) {
        counted.apps.unchanged += 1;
      } else {
        (known === undefined ? counted.apps.added : counted.apps.updated).push(appName);
        appRows.push(this.toAppRow(loaded));
      }
    }
    const functionRows = this.changedFunctions(apps, knownFunctions, counted.functions, options.onProgress);
    if (options.dryRun) {
      for await (const _batch of functionRows) {
        // counted, not written
      }
    } else if (await this.catalog.upsertFromCatalog(appRows, functionRows, this.auditWrite(counted, options.audit))) {
      // New or changed functions change the tool lists of every project that enables them.
      await this.changes.publish('functions');
    }
    for (const kind of ['apps', 'functions'] as const) {
      report[kind].added.push(...counted[kind].added);
      report[kind].updated.push(...counted[kind].updated);
      report[kind].unchanged += counted[kind].unchanged;
    }
  }

  /**
   * The record of an import, written in its transaction once every batch is counted: the apps by name, the
   * functions by number (an import may write thousands). The catalogue is shared: no project.
   */
  private auditWrite(
    counted: Pick<ImportReport, 'apps' | 'functions'>,
    audit: WriteOptions['audit'],
  ): ((manager: EntityManager) => Promise<void>) | undefined {
    if (!audit) {
      return undefined;
    }
    return (manager) =>
      this.audit.record(
        {
          projectId: null,
          actor: audit.actor,
          action: 'catalog.imported',
          resourceId: null,
          after: {
            source: audit.source,
            apps_added: counted.apps.added,
            apps_updated: counted.apps.updated,
            functions_added: counted.functions.added.length,
            functions_updated: counted.functions.updated.length,
          },
        },
        manager,
      );
  }

  /** The apps' function records that are new or changed, batch by batch as they come, counted into `counted`. */
  private async *changedFunctions(
    apps: AppRecords[],
    known: Map<string, { app_name: string; content_hash: string }>,
    counted: ChangeSummary,
    onProgress?: (done: number, total: number) => void,
  ): AsyncGenerator<FunctionRecord[]> {
    let done = 0;
    for (const loaded of apps) {
      const appName = loaded.app.name;
      for await (const batch of loaded.functions) {
        const changed = batch.filter((fn) => {
          const knownFn = known.get(fn.name);
          if (knownFn?.content_hash === fn.hash && knownFn.app_name === appName) {
            counted.unchanged += 1;
            return false;
          }
          (knownFn === undefined ? counted.added : counted.updated).push(fn.name);
          return true;
        });
        if (changed.length > 0) {
          yield changed;
        }
      }
      onProgress?.(++done, apps.length);
    }
  }

  /**
   * After the commit, not inside the transaction: embedding may call a remote endpoint, and on the
   * embedded database an open transaction holds every other connection.
   */
  async refreshSearch(report: Pick<ImportReport, 'apps' | 'functions'>): Promise<void> {
    const changed =
      report.apps.added.length +
      report.apps.updated.length +
      report.functions.added.length +
      report.functions.updated.length;
    if (changed > 0) {
      await this.catalog.refreshStatistics();
      await this.searchIndex.refresh();
    }
  }

  /**
   * Why the database refused a write, when the failure is about the records and the database still
   * answers (a value it cannot store, a statement over its time limit): the caller may go on with
   * other records. Undefined when the error is not the database's, or the database itself failed
   * (connection lost, shutting down, out of resources): nothing more can be written.
   */
  async refusedRecords(error: unknown): Promise<string | undefined> {
    if (!(error instanceof QueryFailedError)) {
      return undefined;
    }
    const driverError = error.driverError as { code?: unknown; message?: unknown } | undefined;
    const code = typeof driverError?.code === 'string' ? driverError.code : undefined;
    const message = typeof driverError?.message === 'string' ? driverError.message : error.message;
    // Without a SQLSTATE only the client's query time limit is about the statement; the rest
    // (connection ended, socket errors) is the database's.
    const aboutRecords = code !== undefined ? !DATABASE_FAILURES.test(code) : isDatabaseTimeout(error);
    if (!aboutRecords || !(await this.catalog.answers())) {
      return undefined;
    }
    return `the database refused its records: ${message.split('\n')[0]}${code ? ` (SQLSTATE ${code})` : ''}`;
  }

  /** `METHOD path` → function name, for the REST functions an app has in the catalogue. */
  async restFunctionNames(appName: string): Promise<Map<string, string>> {
    return this.catalog.restFunctionNames(appName);
  }

  /** What the catalogue holds of an app (its secrets stay sealed), or null. */
  async storedApp(name: string): Promise<AppEntity | null> {
    return this.catalog.storedApp(name);
  }

  /** `TOOL name` → function name, for the tools an MCP server's app has in the catalogue. */
  async mcpToolNames(appName: string): Promise<Map<string, string>> {
    return this.catalog.mcpToolNames(appName);
  }

  /** Deactivates the app's functions not in `keep` (kept as rows, for the execution log); answers their names. */
  async deactivateFunctionsExcept(appName: string, keep: string[]): Promise<string[]> {
    const deactivated = await this.catalog.deactivateFunctionsExcept(appName, keep);
    if (deactivated.length > 0) {
      await this.changes.publish('functions');
      await this.searchIndex.refresh();
    }
    return deactivated;
  }

  /** After an app was deleted with its functions: tool lists change, and search forgets its documents. */
  async appRemoved(): Promise<void> {
    await this.changes.publish('functions');
    await this.searchIndex.refresh();
  }

  async isEmpty(): Promise<boolean> {
    return (await this.catalog.countApps()) === 0;
  }

  /** How many apps and functions the catalogue holds (all of them, private and inactive included). */
  async size(): Promise<{ apps: number; functions: number }> {
    return { apps: await this.catalog.countApps(), functions: await this.catalog.countFunctions() };
  }

  /** The OAuth 2.0 client secret and default credentials are sealed; the rest is stored as given. */
  private toAppRow(loaded: AppRecords): Partial<AppEntity> {
    const { app } = loaded;
    const schemes: Record<string, object> = {};
    const secrets: AppSecrets = {};
    for (const [scheme, settings] of Object.entries(app.security_schemes)) {
      const { client_secret, ...rest } = settings as { client_secret?: string | null };
      if (typeof client_secret === 'string') {
        secrets.oauth2_client_secret = client_secret;
      }
      schemes[scheme] = rest;
    }
    if (Object.keys(app.default_security_credentials_by_scheme).length > 0) {
      secrets.default_security_credentials_by_scheme = app.default_security_credentials_by_scheme;
    }
    return {
      name: app.name,
      display_name: app.display_name,
      provider: app.provider,
      version: app.version,
      description: app.description,
      logo: app.logo ?? '',
      categories: app.categories,
      visibility: app.visibility,
      active: app.active,
      // The catalogue's JSON Schema (catalog.schemas.ts) checked each scheme's settings when the file was loaded.
      security_schemes: schemes,
      secrets: Object.keys(secrets).length > 0 ? this.secretBox.sealJson(secrets) : null,
      content_hash: loaded.appHash,
      updated_at: new Date(),
    };
  }
}

/**
 * Reads a `--secrets` file: a JSON object of strings, or a .env file (NAME=value lines, # comments,
 * quotes, `export` prefixes) read by Node's `util.parseEnv`.
 */
export function readSecretsFile(path: string): Record<string, string> {
  const text = readFileSync(path, 'utf8');
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const parsed = JSON.parse(trimmed) as Record<string, unknown>;
    const result: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (typeof value !== 'string') {
        throw new Error(`${path}: the value of ${key} must be a string`);
      }
      result[key] = value;
    }
    return result;
  }
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(parseEnv(text))) {
    // parseEnv joins a line without "=" to the name on the next line; such a name is refused here.
    if (!ENV_NAME.test(name)) {
      throw new Error(`${path}: expected NAME=value lines, found ${JSON.stringify(name.split('\n', 1)[0])}`);
    }
    result[name] = value ?? '';
  }
  return result;
}

/**
 * SQLSTATE classes of a failing database rather than failing records: connection exceptions (08),
 * insufficient resources (53), operator intervention (57: shutdown, terminated connection — but not
 * 57014, a statement cancelled by its time limit), system errors (58) and internal errors (XX).
 */
const DATABASE_FAILURES = /^(08|53|58|XX)|^57(?!014)/;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
