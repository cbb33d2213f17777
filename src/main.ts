#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './cli/cli.js';

const code = await runCli(process.argv);
if (code !== 0) {
  // A command that failed part-way may leave a handle open (a database thread, a socket): end anyway.
  process.exit(code);
}
