import { readFileSync, writeFileSync } from 'node:fs';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import ms, { type StringValue } from 'ms';
import { DataSource } from 'typeorm';
import { isDateTime, parseDateTime } from '../../libs/common/src/index.js';
import { CatalogService, type ImportReport, readSecretsFile } from '../catalog/catalog.service.js';
import { OpenApiImportService, type OpenApiImportReport } from '../catalog/openapi/openapi-import.service.js';
import { starterCatalogPath } from '../catalog/starter-catalog.js';
import { CliModule } from '../cli.module.js';
import { AppConfig, InvalidConfigError, loadConfig } from '../config/app-config.js';
import { applyMigrations } from '../database/apply-migrations.js';
import { DataDirLockedError } from '../database/embedded-database.js';
import { ProjectsService } from '../projects/projects.service.js';
import { type RotationReport, SecretsRotationService } from '../secrets/secrets-rotation.service.js';

/** Thrown by a command to stop with a message and exit code 1, without a stack trace. */
class CommandError extends Error {}

const out = (text: string) => process.stdout.write(`${text}\n`);
const err = (text: string) => process.stderr.write(`${text}\n`);

/**
 * Runs the `patchbay` command line; returns the exit code (a running server keeps the process alive).
 *
 * The HTTP application (`api-app`, with Fastify, Swagger and the MCP server) and the MCP bridge are
 * loaded by the commands that use them: loading them took 1.2–1.5 s of every other command's start.
 */
export async function runCli(argv: string[]): Promise<number> {
  const program = new Command('patchbay')
    .description('Patchbay: tool integration for AI agents')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description('Run the HTTP service (migrations are applied first)')
    .option('--port <n>', 'port to listen on (default: PORT, else 8000)', parsePort)
    .option('--starter', 'on first start, load the starter catalogue and create a first project')
    .action(async (options: { port?: number; starter?: boolean }) => serve(options));

  program
    .command('migrate')
    .description('Apply pending database migrations')
    .action(() =>
      withContext('patchbay migrate', false, async (ctx) => {
        const applied = await applyMigrations(ctx.get(DataSource), ctx.get(AppConfig).DATABASE_URL);
        out(applied.length ? `Applied: ${applied.map((m) => m.name).join(', ')}` : 'Database is up to date');
      }),
    );

  const projects = program.command('projects').description('Manage projects');
  projects
    .command('create')
    .description('Create a project and its first API key (the key is shown once)')
    .requiredOption('--name <name>', 'project name')
    .option('--json', 'print {"project_id", "api_key"} as JSON')
    .action((options: { name: string; json?: boolean }) =>
      withContext('patchbay projects create', true, async (ctx) => {
        const created = await ctx.get(ProjectsService).createProject(options.name);
        if (options.json) {
          out(JSON.stringify({ project_id: created.project_id, api_key: created.api_key }));
        } else {
          out(`Project ${created.project_id} created.`);
          out(`API key (shown once, store it now): ${created.api_key}`);
        }
      }),
    );

  const apiKeys = program.command('api-keys').description('Manage API keys');
  apiKeys
    .command('create')
    .description('Create another API key for a project (shown once)')
    .requiredOption('--project <id>', 'project id')
    .option('--expires-in <duration>', 'the key stops working after this long (e.g. 30d, 12h, 90m)', parseDuration)
    .option('--expires-at <date-time>', 'the key stops working at this RFC 3339 date-time', parseExpiresAt)
    .option('--json', 'print {"project_id", "api_key_id", "api_key", "expires_at"} as JSON')
    .action((options: { project: string; expiresIn?: number; expiresAt?: Date; json?: boolean }) =>
      withContext('patchbay api-keys create', true, async (ctx) => {
        if (options.expiresIn !== undefined && options.expiresAt !== undefined) {
          throw new CommandError('Give --expires-in or --expires-at, not both');
        }
        const expiresAt =
          options.expiresAt ?? (options.expiresIn !== undefined ? new Date(Date.now() + options.expiresIn) : null);
        const created = await ctx.get(ProjectsService).createApiKey(options.project, expiresAt);
        if (options.json) {
          out(JSON.stringify(created));
        } else {
          out(`API key ${created.api_key_id} created for project ${created.project_id}.`);
          if (created.expires_at) {
            out(`It expires at ${created.expires_at}.`);
          }
          out(`API key (shown once, store it now): ${created.api_key}`);
        }
      }),
    );
  apiKeys
    .command('list')
    .description("List a project's API keys: id, created, expires, last used, revoked (never the key)")
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print the keys as a JSON array')
    .action((options: { project: string; json?: boolean }) =>
      withContext('patchbay api-keys list', true, async (ctx) => {
        const keys = await ctx.get(ProjectsService).listApiKeys(options.project);
        if (options.json) {
          out(JSON.stringify(keys));
          return;
        }
        out(['id', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'].join('\t'));
        for (const key of keys) {
          out(
            [key.id, key.created_at, key.expires_at ?? '-', key.last_used_at ?? '-', key.revoked_at ?? '-'].join('\t'),
          );
        }
      }),
    );
  apiKeys
    .command('revoke')
    .description('Revoke an API key by its id; requests with it are refused from then on')
    .argument('<key_id>', 'API key id')
    .action((keyId: string) =>
      withContext('patchbay api-keys revoke', true, async (ctx) => {
        await ctx.get(ProjectsService).revokeApiKey(keyId);
        out(`API key ${keyId} revoked.`);
      }),
    );

  const secrets = program.command('secrets').description('Manage the keys that seal stored secrets');
  secrets
    .command('rotate')
    .description(
      'Re-seal every stored secret under the newest key of SECRETS_KEYS, in batches (resumable, safe while the service runs)',
    )
    .option('--batch-size <n>', 'rows per transaction (default 100)', parsePositiveInt)
    .option('--json', 'print the report as JSON')
    .action((options: { batchSize?: number; json?: boolean }) =>
      withContext('patchbay secrets rotate', true, async (ctx) => {
        const report = await ctx.get(SecretsRotationService).rotate({ batchSize: options.batchSize });
        if (options.json) {
          out(JSON.stringify(report));
        } else {
          printRotationReport(report);
        }
        if (report.remaining > 0) {
          throw new CommandError(
            report.unreadable > 0
              ? `${report.unreadable} value(s) are sealed with a key that is not in the ring; add it to SECRETS_KEYS and run again`
              : `${report.remaining} value(s) were written under an older key meanwhile (an instance without the new ring?); run again`,
          );
        }
      }),
    );

  const catalog = program.command('catalog').description('Manage the catalogue of apps and functions');
  catalog
    .command('import')
    .description('Import app folders (app.json + functions.json), or folders of app folders')
    .argument('<path...>', 'app folder or folder of app folders')
    .option('--secrets <file>', 'values for {{ NAME }} placeholders (JSON object or NAME=value lines)')
    .option('--dry-run', 'check and report without writing')
    .option('--json', 'print the report as JSON')
    .action((paths: string[], options: { secrets?: string; dryRun?: boolean; json?: boolean }) =>
      withContext('patchbay catalog import', true, async (ctx) => {
        const report = await importCatalog(ctx, paths, options);
        if (options.json) {
          out(JSON.stringify(report));
        } else {
          printImportReport(report);
        }
        if (report.problems.length > 0) {
          throw new CommandError('');
        }
      }),
    );

  catalog
    .command('import-openapi')
    .description('Import OpenAPI 3.x or Swagger 2.0 documents (JSON or YAML): one app per document')
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
    .action((sources: string[], options: OpenApiCliOptions) =>
      withContext('patchbay catalog import-openapi', true, async (ctx) => {
        const report = await importOpenApi(ctx, sources, options);
        if (options.json) {
          out(JSON.stringify(report));
        } else {
          printOpenApiReport(report);
        }
        if (report.refused.length > 0) {
          throw new CommandError('');
        }
      }),
    );

  program
    .command('mcp')
    .description('Speak MCP on standard input/output for a local client, forwarding to a running Patchbay')
    .requiredOption('--url <url>', 'base address of the running Patchbay (e.g. http://127.0.0.1:8000)')
    .option('--api-key <key>', 'project API key (with --owner)')
    .option('--owner <id>', 'linked-account owner to act for (with --api-key)')
    .option('--token <token>', 'owner-scoped MCP token (instead of --api-key and --owner)')
    .option('--mode <mode>', 'unified (default) or direct')
    .option('--apps <names>', 'only these apps, comma-separated')
    .action(
      async (options: {
        url: string;
        apiKey?: string;
        owner?: string;
        token?: string;
        mode?: string;
        apps?: string;
      }) => {
        if (!options.token && !options.apiKey) {
          throw new CommandError('patchbay mcp needs --token, or --api-key (with --owner to execute functions)');
        }
        if (options.mode !== undefined && options.mode !== 'unified' && options.mode !== 'direct') {
          throw new CommandError(`--mode must be unified or direct, not ${options.mode}`);
        }
        try {
          new URL(options.url);
        } catch {
          throw new CommandError(`--url is not a valid URL: ${options.url}`);
        }
        await (await import('./mcp-bridge.js')).runMcpBridge(options);
      },
    );

  program
    .command('openapi')
    .description('Print the OpenAPI document (or write it to a file)')
    .option('--out <file>', 'write to this file instead of standard output')
    .action(async (options: { out?: string }) => {
      const { generateOpenApi } = await import('../api-app.js');
      const text = `${JSON.stringify(await generateOpenApi(), null, 2)}\n`;
      if (options.out) {
        writeFileSync(options.out, text);
      } else {
        process.stdout.write(text);
      }
    });

  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    return reportFailure(error);
  }
}

function reportFailure(error: unknown): number {
  const code = (error as { code?: string }).code;
  if (code === 'commander.helpDisplayed' || code === 'commander.version') {
    return 0;
  }
  if (typeof code === 'string' && code.startsWith('commander.')) {
    return 2;
  }
  if (error instanceof CommandError) {
    if (error.message) {
      err(error.message);
    }
    return 1;
  }
  if (error instanceof InvalidConfigError || error instanceof DataDirLockedError) {
    err(error.message);
    return 1;
  }
  const status = (error as { status?: number }).status;
  if (typeof status === 'number' && status < 500) {
    err((error as Error).message);
    return 1;
  }
  err(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return 1;
}

function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError('must be a positive integer');
  }
  return n;
}

function collectScheme(value: string, previous: string[]): string[] {
  if (value !== 'http_bearer' && value !== 'http_basic') {
    throw new InvalidArgumentError('must be http_bearer or http_basic');
  }
  return [...previous, value];
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A duration with its unit (`ms` package: 90s, 30m, 12h, 30d, 1y); a bare number is refused as ambiguous. */
function parseDuration(value: string): number {
  const milliseconds = /[a-z]\s*$/i.test(value) ? ms(value as StringValue) : undefined;
  if (milliseconds === undefined || !Number.isFinite(milliseconds) || milliseconds <= 0) {
    throw new InvalidArgumentError('must be a positive duration with a unit, e.g. 30d, 12h or 90m');
  }
  return milliseconds;
}

function parseExpiresAt(value: string): Date {
  if (!isDateTime(value)) {
    throw new InvalidArgumentError('must be an RFC 3339 date-time, e.g. 2027-01-31T00:00:00Z');
  }
  return parseDateTime(value);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('must be an integer from 0 to 65535');
  }
  return port;
}

/** Failures are reported once, by reportFailure; only warnings (e.g. a generated secrets key) are logged. */
const WARNINGS_ONLY: LoggerService = {
  log: () => undefined,
  error: () => undefined,
  warn: (message: unknown) => err(`warning: ${String(message)}`),
};

async function withContext(
  holder: string,
  runMigrations: boolean,
  run: (ctx: INestApplicationContext) => Promise<void>,
): Promise<void> {
  loadConfig(process.env);
  const ctx = await NestFactory.createApplicationContext(CliModule.forRoot({ holder, runMigrations }), {
    logger: WARNINGS_ONLY,
    abortOnError: false,
  });
  try {
    await run(ctx);
  } finally {
    await ctx.close();
  }
}

async function importCatalog(
  ctx: INestApplicationContext,
  paths: string[],
  options: { secrets?: string; dryRun?: boolean; json?: boolean },
): Promise<ImportReport> {
  // Placeholders are filled from the environment (the command line is the process's entry point),
  // overridden by the --secrets file.
  const secrets = { ...process.env, ...(options.secrets ? readSecretsFile(options.secrets) : {}) };
  const bar =
    !options.json && process.stderr.isTTY ? new SingleBar({ stream: process.stderr, clearOnComplete: true }) : null;
  try {
    return await ctx.get(CatalogService).importPaths(paths, {
      secrets,
      dryRun: options.dryRun,
      onProgress: (done, total) => {
        if (done === 1) {
          bar?.start(total, 0);
        }
        bar?.update(done);
      },
    });
  } finally {
    bar?.stop();
  }
}

interface OpenApiCliOptions {
  appName?: string;
  server?: string;
  include: string[];
  exclude: string[];
  addScheme: ('http_bearer' | 'http_basic')[];
  maxFunctions?: number;
  includeDeprecated?: boolean;
  openidDiscovery?: string;
  secrets?: string;
  dryRun?: boolean;
  json?: boolean;
}

async function importOpenApi(
  ctx: INestApplicationContext,
  sources: string[],
  options: OpenApiCliOptions,
): Promise<OpenApiImportReport> {
  const secrets = { ...process.env, ...(options.secrets ? readSecretsFile(options.secrets) : {}) };
  let oidcDiscovery: Record<string, unknown> | undefined;
  if (options.openidDiscovery) {
    try {
      oidcDiscovery = JSON.parse(readFileSync(options.openidDiscovery, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new CommandError(`--openid-discovery ${options.openidDiscovery}: ${(error as Error).message}`);
    }
  }
  const bar =
    !options.json && process.stderr.isTTY ? new SingleBar({ stream: process.stderr, clearOnComplete: true }) : null;
  try {
    return await ctx.get(OpenApiImportService).importSources(sources, {
      secrets,
      appName: options.appName,
      server: options.server,
      include: options.include,
      exclude: options.exclude,
      addSchemes: options.addScheme,
      maxFunctions: options.maxFunctions,
      includeDeprecated: options.includeDeprecated,
      oidcDiscovery,
      dryRun: options.dryRun,
      onProgress: (done, total) => {
        if (done === 1) {
          bar?.start(total, 0);
        }
        bar?.update(done);
      },
    });
  } finally {
    bar?.stop();
  }
}

function printOpenApiReport(report: OpenApiImportReport): void {
  const summary = (label: string, s: OpenApiImportReport['apps']) =>
    `${label}: ${s.added.length} added, ${s.updated.length} updated, ${s.unchanged} unchanged`;
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

function printRotationReport(report: RotationReport): void {
  out(`Newest key: ${report.key_id}. Re-sealed ${report.resealed} value(s); ${report.remaining} not under it.`);
  for (const column of report.columns) {
    out(
      `  ${column.column}: ${column.resealed} re-sealed, ${column.changed_concurrently} changed meanwhile, ` +
        `${column.unreadable} unreadable, ${column.remaining} remaining`,
    );
  }
}

function printImportReport(report: ImportReport): void {
  const summary = (label: string, s: ImportReport['apps']) =>
    `${label}: ${s.added.length} added, ${s.updated.length} updated, ${s.unchanged} unchanged`;
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

async function serve(options: { port?: number; starter?: boolean }): Promise<void> {
  // --port wins over PORT; the environment itself is left as it is.
  const env = options.port === undefined ? process.env : { ...process.env, PORT: String(options.port) };
  const { createApiApp, stopApiApp } = await import('../api-app.js');
  const app = await createApiApp({ database: { holder: 'patchbay serve', runMigrations: true }, env });
  const config = app.get(AppConfig);
  try {
    if (options.starter) {
      await firstStart(app);
    }
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    // A port in use, a starter catalogue that does not load…: release the database and its lock.
    await app.close();
    throw error;
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    // A second signal of the other kind is ignored; a second one of the same kind ends at once (default action).
    if (stopping) {
      return;
    }
    stopping = true;
    out(`${signal}: finishing the requests in flight (at most ${config.SHUTDOWN_TIMEOUT_MS} ms), then stopping`);
    stopApiApp(app, config.SHUTDOWN_TIMEOUT_MS).then(
      () => {
        out('Patchbay stopped');
        process.exit(0);
      },
      (error: unknown) => {
        err(
          `Patchbay did not stop cleanly: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const { port } = app.getHttpServer().address() as { port: number };
  out(`Patchbay listening on http://${config.HOST}:${port} (API docs: ${config.publicBaseUrl}/v1/docs)`);
}

/** `npm start`: a new installation gets the starter catalogue and a first project, its key shown once. */
async function firstStart(app: INestApplicationContext): Promise<void> {
  const catalog = app.get(CatalogService);
  if (await catalog.isEmpty()) {
    const report = await catalog.importPaths([starterCatalogPath()], { secrets: { ...process.env } });
    if (report.problems.length > 0) {
      throw new CommandError(`The starter catalogue did not import: ${JSON.stringify(report.problems)}`);
    }
    out(`Loaded the starter catalogue: ${report.apps.added.length} apps, ${report.functions.added.length} functions.`);
  }
  const projects = app.get(ProjectsService);
  if (!(await projects.hasProjects())) {
    const created = await projects.createProject('default');
    out('');
    out('  First start: created a project for you.');
    out(`    project id: ${created.project_id}`);
    out(`    API key:    ${created.api_key}`);
    out('  The key is shown only this once: store it now. Send it as the X-API-KEY header.');
    out('');
  }
}
