import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { INestApplicationContext } from '@nestjs/common';
import { CatalogService } from '../catalog/catalog.service.js';
import { starterCatalogPath } from '../catalog/starter-catalog.js';
import { AppConfig } from '../config/app-config.js';
import { ProjectsService } from '../projects/projects.service.js';
import { parsePort } from './arguments.js';
import { type CommandGroup, CommandError, err, out } from './command.js';
import { SYSTEM_ACTOR } from '../audit/actor.js';

interface ServeOptions {
  port?: number;
  starter?: boolean;
}

/** `patchbay serve`. */
export const serveCommands: CommandGroup = (program) => {
  program
    .command('serve')
    .summary('Run the HTTP service (migrations are applied first)')
    .description(
      'Apply pending migrations, then serve HTTP until SIGTERM or SIGINT, which let the requests in flight finish ' +
        '(SHUTDOWN_TIMEOUT_MS). With --starter (what `npm start` runs), a first start loads the starter catalogue ' +
        'and creates a first project, and its API key is shown once.',
    )
    .option('--port <n>', 'port to listen on (default: PORT, else 8000)', parsePort)
    .option('--starter', 'on first start, load the starter catalogue and create a first project')
    .action(async (options: ServeOptions) => serve(options));
};

async function serve(options: ServeOptions): Promise<void> {
  // --port wins over PORT; the environment itself is left as it is.
  const env = options.port === undefined ? process.env : { ...process.env, PORT: String(options.port) };
  // Loaded here only: the HTTP application's modules take over a second to load.
  const { createApiApp, stopApiApp } = await import('../api-app.js');
  const app = await createApiApp({ database: { holder: 'patchbay serve', runMigrations: true }, env });
  const config = app.get(AppConfig);
  let firstStart: FirstStart = {};
  try {
    if (options.starter) {
      firstStart = await prepareFirstStart(app);
    }
    await app.listen({ port: config.PORT, host: config.HOST });
    servingHeap();
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
  await printSummary(app, config, port, firstStart);
}

/**
 * While serving, V8 allocates every object young (no allocation-site pretenuring). With pretenuring, V8 may
 * decide, from what survived its young-generation collections at some moment, to allocate the objects of some
 * allocation sites of the request path in the old generation from then on; a process that made that decision
 * spent 4 times as long in young-generation collections and 20–30 % more CPU per execution for the rest of its
 * life. In `npm run bench:execute` with three services of the same build side by side (PostgreSQL, concurrency
 * 64, 2026-11-29), 6 of 21 service processes settled in that state with pretenuring (101–116 µs of CPU per
 * execution against 80–91 µs), none of 27 without it (81–97 µs). Set once listening: what the start loads (the
 * catalogue, the search index) keeps V8's default. V8 reads this flag at each collection.
 */
function servingHeap(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}

/** What a first start (`--starter`) did: the starter catalogue loaded, a first project created. */
interface FirstStart {
  starterLoaded?: boolean;
  project?: { project_id: string; api_key: string };
}

/** `npm start`: a new installation gets the starter catalogue and a first project, its key shown once. */
async function prepareFirstStart(app: INestApplicationContext): Promise<FirstStart> {
  const done: FirstStart = {};
  const catalog = app.get(CatalogService);
  if (await catalog.isEmpty()) {
    const report = await catalog.importPaths([starterCatalogPath()], {
      secrets: { ...process.env },
      actor: SYSTEM_ACTOR,
    });
    if (report.problems.length > 0) {
      throw new CommandError(`The starter catalogue did not import: ${JSON.stringify(report.problems)}`);
    }
    done.starterLoaded = true;
  }
  const projects = app.get(ProjectsService);
  if (!(await projects.hasProjects())) {
    done.project = await projects.createProject(SYSTEM_ACTOR, 'default');
  }
  return done;
}

/**
 * The last lines of the start: where the service is, what it stores in, what it serves, and on a
 * first start the key to call it with. The first line is what scripts wait for ("listening on URL").
 */
async function printSummary(app: INestApplicationContext, config: AppConfig, port: number, firstStart: FirstStart) {
  const size = await app.get(CatalogService).size();
  const address = `http://${config.HOST}:${port}`;
  // PUBLIC_BASE_URL when set; else the address actually bound (PORT may be 0: any free port).
  const publicBase = config.PUBLIC_BASE_URL ? config.publicBaseUrl : address;
  const lines = [
    '',
    `Patchbay listening on ${address}`,
    `  API docs:   ${publicBase}/v1/docs`,
    `  Database:   ${describeDatabase(config)}`,
    `  Catalogue:  ${size.apps} apps, ${size.functions} functions${firstStart.starterLoaded ? ' (the starter catalogue, loaded now)' : ''}`,
  ];
  if (firstStart.project) {
    lines.push(
      `  Project:    ${firstStart.project.project_id} (created now)`,
      `  API key:    ${firstStart.project.api_key}`,
      '              Shown only this once: store it now. Send it as the X-API-KEY header.',
    );
  }
  lines.push('');
  out(lines.join('\n'));
}

/** The database without its credentials. */
function describeDatabase(config: AppConfig): string {
  if (!config.DATABASE_URL) {
    return `embedded, in ${resolve(config.DATA_DIR)}`;
  }
  const url = new URL(config.DATABASE_URL);
  return `PostgreSQL at ${url.hostname}:${url.port || '5432'}${url.pathname}`;
}
