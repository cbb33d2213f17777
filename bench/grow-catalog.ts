/**
 * Bench helper, run as its own process (it opens the database like the command line does):
 * `node dist/bench/grow-catalog.js <copies>` makes the catalogue hold `copies` variants of each
 * original ACI app with all their functions (names suffixed _X<n>, descriptions varied), then
 * brings the search index (documents and embeddings) up to date.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { CliModule } from '../src/cli.module.js';
import { SearchIndexService } from '../src/search/index.js';

/** Words appended to copied descriptions, so that copies are not identical documents. */
const VARIANTS = ['batch', 'archive', 'export', 'audit', 'team', 'workspace', 'report', 'sync', 'bulk', 'legacy', 'v2'];

async function main(): Promise<void> {
  const copies = Number(process.argv[2]);
  const ctx = await NestFactory.createApplicationContext(
    CliModule.forRoot({ holder: 'bench grow-catalog', runMigrations: true }),
    { logger: ['error', 'warn'] },
  );
  try {
    const dataSource = ctx.get(DataSource);
    const [{ existing }] = await dataSource.query<{ existing: number }[]>(
      `SELECT count(DISTINCT substring(name from '_X([0-9]+)$'))::int AS existing FROM apps WHERE name ~ '_X[0-9]+$'`,
    );
    const from = existing + 2;
    const to = copies;
    if (to >= from) {
      const words = `ARRAY[${VARIANTS.map((w) => `'${w}'`).join(',')}]`;
      await dataSource.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO apps (name, display_name, provider, version, description, logo, categories, visibility, active,
                             security_schemes, secrets, content_hash)
           SELECT a.name || '_X' || n, a.display_name || ' ' || n, a.provider, a.version,
                  a.description || ' ' || (${words})[1 + n % ${VARIANTS.length}],
                  a.logo, a.categories, a.visibility, a.active, a.security_schemes, a.secrets, md5(a.content_hash || n)
             FROM apps a CROSS JOIN generate_series($1::int, $2::int) n
            WHERE a.name !~ '_X[0-9]+$'`,
          [from, to],
        );
        await manager.query(
          `INSERT INTO functions (name, app_name, description, tags, visibility, active, protocol, protocol_data,
                                  parameters, response, content_hash)
           SELECT f.app_name || '_X' || n || '__' || substring(f.name from position('__' in f.name) + 2),
                  f.app_name || '_X' || n,
                  f.description || ' ' || (${words})[1 + (n + length(f.name)) % ${VARIANTS.length}],
                  f.tags, f.visibility, f.active, f.protocol, f.protocol_data, f.parameters, f.response,
                  md5(f.content_hash || n)
             FROM functions f CROSS JOIN generate_series($1::int, $2::int) n
            WHERE f.app_name !~ '_X[0-9]+$'`,
          [from, to],
        );
      });
    }
    const started = performance.now();
    await ctx.get(SearchIndexService).refresh();
    const [{ functions }] = await dataSource.query<{ functions: number }[]>(
      `SELECT count(*)::int AS functions FROM functions`,
    );
    process.stdout.write(
      JSON.stringify({ functions, index_seconds: Number(((performance.now() - started) / 1000).toFixed(1)) }) + '\n',
    );
  } finally {
    await ctx.close();
  }
}

await main();
