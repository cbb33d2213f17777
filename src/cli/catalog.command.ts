import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { CatalogService, type ChangeSummary, type ImportReport, readSecretsFile } from '../catalog/catalog.service.js';
import { OpenApiImportService, type OpenApiImportReport } from '../catalog/openapi/openapi-import.service.js';
import { collect, parsePositiveInt } from './arguments.js';
import { type CommandGroup, CommandError, err, out, outResult, withContext, withProgressBar } from './command.js';
import { mcpServerCommands } from './mcp-servers.command.js';

interface ImportOptions {
  secrets?: string;
  dryRun?: boolean;
  json?: boolean;
}

interface ImportOpenApiOptions extends ImportOptions {
  appName?: string;
  server?: string;
  include: string[];
  exclude: string[];
  addScheme: ('http_bearer' | 'http_basic')[];
  maxFunctions?: number;
  includeDeprecated?: boolean;
  openidDiscovery?: string;
}

/** `patchbay catalog …`. */
export const catalogCommands: CommandGroup = (program) => {
  const catalog = program.command('catalog').description('Manage the catalogue of apps and functions');

  catalog
    .command('import')
    .summary('Import app folders (app.json + functions.json), or folders of app folders')
    .description(
      'Import app folders (app.json + functions.json), or folders of app folders. Any problem (file, JSON path ' +
        'and reason) refuses the whole import; a re-import reports apps and functions as added, updated or ' +
        'unchanged. {{ NAME }} placeholders are filled from the environment or the --secrets file (a JSON object, ' +
        'or NAME=value lines read as a .env file); unfilled ones leave that credential unset and are listed. A ' +
        'progress bar shows on a terminal. See the catalogue guide (docs/catalogue.md).',
    )
    .argument('<path...>', 'app folder or folder of app folders')
    .option('--secrets <file>', 'values for {{ NAME }} placeholders (JSON object or NAME=value lines)')
    .option('--dry-run', 'check and report without writing')
    .option('--json', 'print the report as JSON')
    .action((paths: string[], options: ImportOptions) =>
      withContext('patchbay catalog import', true, async (ctx) => {
        const report = await withProgressBar(options.json, (onProgress) =>
          ctx.get(CatalogService).importPaths(paths, {
            secrets: placeholderValues(options.secrets),
            dryRun: options.dryRun,
            onProgress,
          }),
        );
        outResult(report, options.json, printImportReport);
        if (report.problems.length > 0) {
          throw new CommandError('');
        }
      }),
    );

  catalog
    .command('import-openapi')
    .summary('Import OpenAPI 3.x or Swagger 2.0 documents (JSON or YAML): one app per document')
    .description(
      'Import OpenAPI 3.0/3.1 and Swagger 2.0 documents (JSON or YAML files, or folders of them): one app per ' +
        'document, each in its own transaction. Refused documents are listed with their reasons (exit 1) and ' +
        'the others are imported. See docs/openapi-import.md.',
    )
    .argument('<source...>', 'document file, or folder of documents')
    .option('--app-name <name>', 'app name (one document only); default: from the title')
    .option('--server <url>', 'server URL; default: the first servers entry (Swagger: scheme + host + basePath)')
    .option('--include <glob>', 'import only operations whose operationId or path matches (repeatable)', collect, [])
    .option('--exclude <glob>', 'leave out operations whose operationId or path matches (repeatable)', collect, [])
    .option('--max-functions <n>', 'import at most N functions per document', parsePositiveInt)
    .option('--include-deprecated', 'import deprecated operations too')
    .option(
      '--add-scheme <kind>',
      'offer http_bearer or http_basic although the document does not declare it',
      collectScheme,
      [],
    )
    .option('--openid-discovery <file>', 'OpenID Connect discovery document (JSON) for openIdConnect schemes')
    .option('--secrets <file>', 'values for the OAuth 2.0 client placeholders (JSON object or NAME=value lines)')
    .option('--dry-run', 'check and report without writing')
    .option('--json', 'print the report as one JSON object')
    .action((sources: string[], options: ImportOpenApiOptions) =>
      withContext('patchbay catalog import-openapi', true, async (ctx) => {
        const oidcDiscovery = options.openidDiscovery ? readDiscovery(options.openidDiscovery) : undefined;
        const report = await withProgressBar(options.json, (onProgress) =>
          ctx.get(OpenApiImportService).importSources(sources, {
            secrets: placeholderValues(options.secrets),
            appName: options.appName,
            server: options.server,
            include: options.include,
            exclude: options.exclude,
            addSchemes: options.addScheme,
            maxFunctions: options.maxFunctions,
            includeDeprecated: options.includeDeprecated,
            oidcDiscovery,
            dryRun: options.dryRun,
            onProgress,
          }),
        );
        outResult(report, options.json, printOpenApiReport);
        if (report.refused.length > 0) {
          throw new CommandError('');
        }
      }),
    );

  mcpServerCommands(catalog);
};

/**
 * Values for `{{ NAME }}` placeholders: the environment (the command line is the process's entry
 * point), overridden by the --secrets file.
 */
function placeholderValues(secretsFile: string | undefined): Record<string, string | undefined> {
  return { ...process.env, ...(secretsFile ? readSecretsFile(secretsFile) : {}) };
}

function readDiscovery(file: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new CommandError(`--openid-discovery ${file}: ${(error as Error).message}`);
  }
}

function collectScheme(value: string, previous: string[]): string[] {
  if (value !== 'http_bearer' && value !== 'http_basic') {
    throw new InvalidArgumentError('must be http_bearer or http_basic');
  }
  return [...previous, value];
}

/** "Apps: 2 added, 1 updated, 95 unchanged", the first lines of both imports' reports. */
function summary(label: string, counts: ChangeSummary): string {
  return `${label}: ${counts.added.length} added, ${counts.updated.length} updated, ${counts.unchanged} unchanged`;
}

function printImportReport(report: ImportReport): void {
  if (report.problems.length > 0) {
    err(`Import refused, nothing was written. ${report.problems.length} problem(s):`);
    for (const p of report.problems) {
      err(`  ${p.file}${p.path ? ` at ${p.path}` : ''}: ${p.reason}`);
    }
    return;
  }
  out(`${report.dry_run ? 'Dry run, nothing written. ' : ''}${summary('Apps', report.apps)}`);
  out(summary('Functions', report.functions));
  for (const [label, names] of [
    ['Added apps', report.apps.added],
    ['Updated apps', report.apps.updated],
  ] as const) {
    if (names.length > 0) {
      out(`${label}: ${names.join(', ')}`);
    }
  }
  if (report.unfilled_placeholders.length > 0) {
    out(
      `Unfilled placeholders (those default credentials stay unset; projects must supply overrides): ` +
        report.unfilled_placeholders.map((u) => `${u.app} ${u.placeholder}`).join(', '),
    );
  }
}

function printOpenApiReport(report: OpenApiImportReport): void {
  out(`${report.dry_run ? 'Dry run, nothing written. ' : ''}${summary('Apps', report.apps)}`);
  out(summary('Functions', report.functions));
  for (const doc of report.documents) {
    out(`${doc.file}: app ${doc.app}, ${doc.functions} function(s), ${doc.skipped.length} operation(s) skipped`);
    for (const skipped of doc.skipped) {
      out(`  skipped ${skipped.operation}: ${skipped.reason}`);
    }
    for (const reduced of doc.reduced) {
      out(`  reduced ${reduced.operation}: ${reduced.reason}`);
    }
    for (const note of doc.notes) {
      out(`  note: ${note}`);
    }
  }
  if (report.unfilled_placeholders.length > 0) {
    out(`Unfilled placeholders: ${report.unfilled_placeholders.map((u) => `${u.app} ${u.placeholder}`).join(', ')}`);
  }
  if (report.refused.length > 0) {
    err(`${report.refused.length} document(s) refused (the others were imported):`);
    for (const refused of report.refused) {
      err(`  ${refused.file}: ${refused.reason}`);
    }
  }
}
