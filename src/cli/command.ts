import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { CliModule } from '../cli.module.js';
import { loadConfig } from '../config/app-config.js';

/**
 * A group of commands (`patchbay catalog …`, `patchbay api-keys …`): it adds its commands to the
 * program. cli.ts lists the groups; a new command is added in its group's file alone.
 */
export type CommandGroup = (program: Command) => void;

/** Thrown by a command to stop with a message and exit code 1, without a stack trace. */
export class CommandError extends Error {}

export const out = (text: string) => process.stdout.write(`${text}\n`);
export const err = (text: string) => process.stderr.write(`${text}\n`);

/** A command's result: with --json one line of JSON and nothing else, else the lines `text` writes. */
export function outResult<T>(result: T, json: boolean | undefined, text: (result: T) => void): void {
  if (json) {
    out(JSON.stringify(result));
  } else {
    text(result);
  }
}

/** Failures are reported once, by the program; only warnings (e.g. a generated secrets key) are logged. */
const WARNINGS_ONLY: LoggerService = {
  log: () => undefined,
  error: () => undefined,
  warn: (message: unknown) => err(`warning: ${String(message)}`),
};

/**
 * Runs `run` in the command line's application context (configuration, database and services, no
 * HTTP), named `holder` in the embedded database's lock, and closes it afterwards.
 */
export async function withContext(
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

/**
 * Runs a long import with a progress bar on standard error when it is a terminal (and the output is
 * not JSON); `work` reports (done, total) as it goes.
 */
export async function withProgressBar<T>(
  json: boolean | undefined,
  work: (onProgress: (done: number, total: number) => void) => Promise<T>,
): Promise<T> {
  const bar = !json && process.stderr.isTTY ? new SingleBar({ stream: process.stderr, clearOnComplete: true }) : null;
  try {
    return await work((done, total) => {
      if (done === 1) {
        bar?.start(total, 0);
      }
      bar?.update(done);
    });
  } finally {
    bar?.stop();
  }
}
