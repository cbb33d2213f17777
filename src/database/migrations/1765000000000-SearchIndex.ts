import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The search index: a document per app and function (weighted text, tsvector, text hash), their
 * embeddings per model in an untyped pgvector column (any dimension), a catalogue version that
 * statement triggers raise on every write to apps or functions, and the marks row triggers leave
 * for what those writes made stale.
 */
export class SearchIndex1765000000000 implements MigrationInterface {
  name = 'SearchIndex1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "search_documents" ("kind" text NOT NULL, "name" text NOT NULL, "app_name" text NOT NULL, "fields" jsonb NOT NULL, "document" tsvector NOT NULL, "embedding_text" text NOT NULL, "text_hash" text NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_0f3c2abe58c1ea1a0740fdc0ab9" PRIMARY KEY ("kind", "name"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_e2c04411fb7c594e7b23bc5edd" ON "search_documents" ("app_name")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_search_documents_document" ON "search_documents" USING GIN ("document")`,
    );
    await queryRunner.query(
      `CREATE TABLE "search_embeddings" ("kind" text NOT NULL, "name" text NOT NULL, "model" text NOT NULL, "text_hash" text NOT NULL, "dimensions" integer NOT NULL, "embedding" vector NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_a1757878706136bc58350162e38" PRIMARY KEY ("kind", "name", "model"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_02c6ca94952418c89d23ed27c6" ON "search_embeddings" ("model", "kind")`);
    await queryRunner.query(
      `ALTER TABLE "search_embeddings" ADD CONSTRAINT "FK_d0f25b532e7ded093996e743757" FOREIGN KEY ("kind", "name") REFERENCES "search_documents"("kind","name") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `CREATE TABLE "search_catalog_version" ("id" integer NOT NULL, "version" bigint NOT NULL DEFAULT '0', CONSTRAINT "PK_7600d10dc9401bd30a8616c9f04" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`INSERT INTO "search_catalog_version" ("id", "version") VALUES (1, 0)`);
    await queryRunner.query(`CREATE FUNCTION "raise_search_catalog_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "search_catalog_version" SET "version" = "version" + 1 WHERE "id" = 1;
  RETURN NULL;
END
$$`);
    for (const table of ['apps', 'functions']) {
      await queryRunner.query(
        `CREATE TRIGGER "${table}_search_catalog_version" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "raise_search_catalog_version"()`,
      );
    }
    await queryRunner.query(
      `CREATE TABLE "search_stale" ("kind" text NOT NULL, "name" text NOT NULL, "seq" BIGSERIAL NOT NULL, CONSTRAINT "PK_ed6c60d1a5490f90b6a6599f657" PRIMARY KEY ("kind", "name"))`,
    );
    // What each write makes stale (see SearchStaleEntity). A mark made again takes a new seq.
    const mark = `INSERT INTO "search_stale" ("kind", "name") VALUES`;
    const again = `ON CONFLICT ("kind", "name") DO UPDATE SET "seq" = nextval('search_stale_seq_seq')`;
    await queryRunner.query(`CREATE FUNCTION "mark_search_stale"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    ${mark} ('all', '*') ${again};
  ELSIF TG_TABLE_NAME = 'functions' THEN
    IF TG_OP <> 'DELETE' THEN
      ${mark} ('function', NEW.name), ('app_context', NEW.app_name) ${again};
    END IF;
    IF TG_OP <> 'INSERT' THEN
      ${mark} ('function', OLD.name), ('app_context', OLD.app_name) ${again};
    END IF;
  ELSE
    IF TG_OP <> 'DELETE' THEN
      ${mark} ('app', NEW.name) ${again};
    END IF;
    IF TG_OP <> 'INSERT' THEN
      ${mark} ('app', OLD.name) ${again};
    END IF;
  END IF;
  RETURN NULL;
END
$$`);
    for (const table of ['apps', 'functions']) {
      await queryRunner.query(
        `CREATE TRIGGER "${table}_search_stale" AFTER INSERT OR UPDATE OR DELETE ON "${table}" FOR EACH ROW EXECUTE FUNCTION "mark_search_stale"()`,
      );
      await queryRunner.query(
        `CREATE TRIGGER "${table}_search_stale_truncate" AFTER TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "mark_search_stale"()`,
      );
    }
    // A catalogue imported before this migration is indexed on the first refresh.
    await queryRunner.query(`INSERT INTO "search_stale" ("kind", "name") VALUES ('all', '*')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['apps', 'functions']) {
      await queryRunner.query(`DROP TRIGGER "${table}_search_stale_truncate" ON "${table}"`);
      await queryRunner.query(`DROP TRIGGER "${table}_search_stale" ON "${table}"`);
      await queryRunner.query(`DROP TRIGGER "${table}_search_catalog_version" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "mark_search_stale"()`);
    await queryRunner.query(`DROP TABLE "search_stale"`);
    await queryRunner.query(`DROP FUNCTION "raise_search_catalog_version"()`);
    await queryRunner.query(`DROP TABLE "search_catalog_version"`);
    await queryRunner.query(`DROP TABLE "search_embeddings"`);
    await queryRunner.query(`DROP TABLE "search_documents"`);
  }
}
