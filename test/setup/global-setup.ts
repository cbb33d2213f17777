import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { TestProject } from 'vitest/node';
import { loadConfig } from '../../src/config/app-config.js';
import { databaseOptions } from '../../src/database/database-options.js';
import { EmbeddedDatabase } from '../../src/database/embedded-database.js';
import { withDatabase } from '../helpers/database-url.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplate: { kind: 'embedded'; dumpPath: string } | { kind: 'server'; url: string; template: string };
  }
}

/**
 * Runs the migrations once into a template; every test file then starts from a copy of it
 * (a PGlite dump in memory, or `CREATE DATABASE … TEMPLATE` on a PostgreSQL server).
 */
export default async function setup(project: TestProject) {
  // The command-line tests run the compiled `patchbay` binary.
  execFileSync(process.execPath, ['scripts/build-if-needed.mjs'], { stdio: 'inherit' });
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const template = `patchbay_tpl_${randomBytes(4).toString('hex')}`;
    const admin = new DataSource({ type: 'postgres', url: serverUrl });
    await admin.initialize();
    await admin.query(`CREATE DATABASE "${template}"`);
    const config = loadConfig({ DATABASE_URL: withDatabase(serverUrl, template) });
    const ds = new DataSource({ ...databaseOptions(config), extra: { max: 2 } });
    await ds.initialize();
    await ds.runMigrations();
    await ds.destroy();
    project.provide('databaseTemplate', { kind: 'server', url: serverUrl, template });
    return async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
      await admin.destroy();
    };
  }
  const db = await EmbeddedDatabase.open({ dataDir: 'memory://', maxConnections: 4, holder: 'test setup' });
  const ds = new DataSource(databaseOptions(loadConfig({}), db));
  await ds.initialize();
  await ds.runMigrations();
  await ds.destroy();
  const dumpPath = join(tmpdir(), `patchbay-template-${process.pid}.tar`);
  writeFileSync(dumpPath, Buffer.from(await (await db.dump()).arrayBuffer()));
  await db.close();
  project.provide('databaseTemplate', { kind: 'embedded', dumpPath });
  return () => rmSync(dumpPath, { force: true });
}
