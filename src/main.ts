#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './cli/cli.js';

process.exitCode = await runCli(process.argv);
