import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Projects, API keys, the catalogue (apps, functions), app configurations and linked accounts. */
export class Initial1763884800000 implements MigrationInterface {
  name = 'Initial1763884800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS vector`);
    await queryRunner.query(
      `CREATE TABLE "apps" ("name" text NOT NULL, "display_name" text NOT NULL, "provider" text NOT NULL, "version" text NOT NULL, "description" text NOT NULL, "logo" text NOT NULL, "categories" text array NOT NULL, "visibility" text NOT NULL, "active" boolean NOT NULL, "security_schemes" jsonb NOT NULL, "secrets" text, "content_hash" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_c1a24df1d51c2748d97561b77da" PRIMARY KEY ("name"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "projects" ("id" uuid NOT NULL, "name" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6271df0a7aed1d6c0691ce6ac50" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "app_configurations" ("id" uuid NOT NULL, "project_id" uuid NOT NULL, "app_name" text NOT NULL, "security_scheme" text NOT NULL, "security_scheme_overrides" jsonb NOT NULL, "secrets" text, "enabled" boolean NOT NULL, "all_functions_enabled" boolean NOT NULL, "enabled_functions" text array NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_ef3edc69d465a23ec826d0f0d3d" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "IDX_0f2ac618dfb6a12bab2f5c7586" ON "app_configurations"("project_id", "app_name")`,
    );
    await queryRunner.query(
      `CREATE TABLE "functions" ("name" text NOT NULL, "app_name" text NOT NULL, "description" text NOT NULL, "tags" text array NOT NULL, "visibility" text NOT NULL, "active" boolean NOT NULL, "protocol" text NOT NULL, "protocol_data" jsonb NOT NULL, "parameters" jsonb NOT NULL, "response" jsonb NOT NULL, "content_hash" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_c16b68177fcec6e85aa50922972" PRIMARY KEY ("name"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_13436787900ef0023edb6eaa9b" ON "functions"("app_name")`);
    await queryRunner.query(
      `CREATE TABLE "linked_accounts" ("id" uuid NOT NULL, "project_id" uuid NOT NULL, "app_name" text NOT NULL, "linked_account_owner_id" character varying(255) NOT NULL, "security_scheme" text NOT NULL, "credentials" text NOT NULL, "enabled" boolean NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_445bf7a50aeeb7f0084052935a6" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "IDX_fea0bf5583d00d43c988f9dd35" ON "linked_accounts"("project_id", "app_name", "linked_account_owner_id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "api_keys" ("id" uuid NOT NULL, "project_id" uuid NOT NULL, "key_hash" text NOT NULL, "key_prefix" text NOT NULL, "revoked_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_f5de07dbb229225e2be643ff3d" ON "api_keys"("project_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_57384430aa1959f4578046c9b8" ON "api_keys"("key_hash")`);
    await queryRunner.query(
      `ALTER TABLE "app_configurations" ADD CONSTRAINT "FK_9910cedbeb775c9d7fe2511b0e3" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "app_configurations" ADD CONSTRAINT "FK_149aec93730f19081c7a11954c5" FOREIGN KEY ("app_name") REFERENCES "apps"("name") ON DELETE RESTRICT ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "functions" ADD CONSTRAINT "FK_13436787900ef0023edb6eaa9b4" FOREIGN KEY ("app_name") REFERENCES "apps"("name") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "linked_accounts" ADD CONSTRAINT "FK_9182999f7f78984f6a20ae6e7bc" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "linked_accounts" ADD CONSTRAINT "FK_01638c245f686c8f5136868530f" FOREIGN KEY ("app_name") REFERENCES "apps"("name") ON DELETE RESTRICT ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "FK_f5de07dbb229225e2be643ff3d0" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "api_keys"`);
    await queryRunner.query(`DROP TABLE "linked_accounts"`);
    await queryRunner.query(`DROP TABLE "functions"`);
    await queryRunner.query(`DROP TABLE "app_configurations"`);
    await queryRunner.query(`DROP TABLE "projects"`);
    await queryRunner.query(`DROP TABLE "apps"`);
  }
}
