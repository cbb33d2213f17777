import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search ranks in memory (src/search/search-engine.ts): the weighted tsvector of each search document and its
 * GIN index were written on every refresh and never queried.
 */
export class DropSearchTsvector1769500000000 implements MigrationInterface {
  name = 'DropSearchTsvector1769500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_search_documents_document"`);
    await queryRunner.query(`ALTER TABLE "search_documents" DROP COLUMN "document"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Empty for the rows already there; the next refresh of a changed document fills it.
    await queryRunner.query(`ALTER TABLE "search_documents" ADD "document" tsvector NOT NULL DEFAULT ''`);
    await queryRunner.query(`ALTER TABLE "search_documents" ALTER COLUMN "document" DROP DEFAULT`);
    await queryRunner.query(
      `CREATE INDEX "IDX_search_documents_document" ON "search_documents" USING GIN ("document")`,
    );
  }
}
