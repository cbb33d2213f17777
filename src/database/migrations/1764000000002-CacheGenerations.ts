import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables whose rows the execution hot path caches; every write to one of them raises its counter. */
const CACHED_TABLES = ['apps', 'functions', 'app_configurations', 'linked_accounts'];

/**
 * Per-table change counters kept by statement triggers, so that every service instance can tell,
 * with one cheap poll, that its cached rows of a table are stale, whoever wrote them.
 */
export class CacheGenerations1764000000002 implements MigrationInterface {
  name = 'CacheGenerations1764000000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "cache_generations" ("table_name" text NOT NULL, "generation" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_fad3c4177879b2936d0aee57364" PRIMARY KEY ("table_name"))`,
    );
    await queryRunner.query(
      `INSERT INTO "cache_generations" ("table_name") VALUES ${CACHED_TABLES.map((t) => `('${t}')`).join(', ')}`,
    );
    await queryRunner.query(`CREATE FUNCTION "raise_cache_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "cache_generations" SET "generation" = "generation" + 1 WHERE "table_name" = TG_TABLE_NAME;
  RETURN NULL;
END
$$`);
    for (const table of CACHED_TABLES) {
      await queryRunner.query(
        `CREATE TRIGGER "${table}_cache_generation" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "raise_cache_generation"()`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of CACHED_TABLES) {
      await queryRunner.query(`DROP TRIGGER "${table}_cache_generation" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "raise_cache_generation"()`);
    await queryRunner.query(`DROP TABLE "cache_generations"`);
  }
}
