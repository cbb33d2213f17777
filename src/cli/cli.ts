import { Command } from 'commander';
import { InvalidConfigError } from '../config/app-config.js';
import { DataDirLockedError } from '../database/embedded-database.js';
import { apiKeysCommands } from './api-keys.command.js';
import { catalogCommands } from './catalog.command.js';
import { type CommandGroup, CommandError, err } from './command.js';
import { mcpCommands } from './mcp.command.js';
import { migrateCommands } from './migrate.command.js';
import { openApiCommands } from './openapi.command.js';
import { projectsCommands } from './projects.command.js';
import { secretsCommands } from './secrets.command.js';
import { serveCommands } from './serve.command.js';

/** The command groups, in the order `patchbay --help` lists them. */
const COMMAND_GROUPS: CommandGroup[] = [
  serveCommands,
  migrateCommands,
  projectsCommands,
  apiKeysCommands,
  secretsCommands,
  catalogCommands,
  mcpCommands,
  openApiCommands,
];

/** The `patchbay` program with every command group; nothing runs until it is parsed. */
export function buildProgram(): Command {
  const program = new Command('patchbay')
    .description('Patchbay: tool integration for AI agents')
    .showHelpAfterError()
    .exitOverride();
  for (const addGroup of COMMAND_GROUPS) {
    addGroup(program);
  }
  return program;
}

/**
 * Runs the `patchbay` command line; returns the exit code (a running server keeps the process alive).
 *
 * The HTTP application (`api-app`, with Fastify, Swagger and the MCP server) and the MCP bridge are
 * loaded by the commands that use them: loading them took 1.2–1.5 s of every other command's start.
 */
export async function runCli(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
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
