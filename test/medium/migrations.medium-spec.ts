import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../helpers/test-app.js';

describe('migrations', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
  });

  afterAll(() => app.close());

  it('leave nothing for the entities to change (entities and migrations agree)', async () => {
    const pending = await app.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('are all applied', async () => {
    expect(await app.dataSource.showMigrations()).toBe(false);
  });

  it('install pgvector', async () => {
    const rows: { extname: string }[] = await app.dataSource.query(
      `SELECT extname FROM pg_extension WHERE extname = 'vector'`,
    );
    expect(rows).toHaveLength(1);
  });
});
