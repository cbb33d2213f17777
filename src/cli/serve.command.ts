import type { INestApplicationContext } from '@nestjs/common';
import { CatalogService } from '../catalog/catalog.service.js';
import { starterCatalogPath } from '../catalog/starter-catalog.js';
import { AppConfig } from '../config/app-config.js';
import { ProjectsService } from '../projects/projects.service.js';
import { parsePort } from './arguments.js';
import { type CommandGroup, CommandError, err, out } from './command.js';

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
