import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search documents gained the `operation` field (a REST function's action by its method and path,
 * src/search/search-document.ts): every document is marked stale, so the next refresh rebuilds them all.
 */
export class SearchDocumentsOperation1769700000000 implements MigrationInterface {
  name = 'SearchDocumentsOperation1769700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `INSERT INTO "search_stale" ("kind", "name") VALUES ('all', '*')
       ON CONFLICT ("kind", "name") DO UPDATE SET "seq" = nextval('search_stale_seq_seq')`,
    );
  }

  async down(): Promise<void> {
    // Documents with the extra field rank as before once the code without it reads them.
  }
}
