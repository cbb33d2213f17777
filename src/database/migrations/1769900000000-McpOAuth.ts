import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * OAuth 2.1 for /v1/mcp (src/mcp-oauth): each project's identity provider (its client secret and the
 * authorization server's keys sealed), and what the authorization server keeps (ids hashed).
 */
export class McpOAuth1769900000000 implements MigrationInterface {
  name = 'McpOAuth1769900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "mcp_identity_providers" ("project_id" uuid NOT NULL, "issuer" text NOT NULL, "client_id" text NOT NULL, "client_secret" text NOT NULL, "scopes" text NOT NULL, "owner_claim" character varying(255) NOT NULL, "server_keys" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_9f49252e9dd771bfdd0b4f75cfd" PRIMARY KEY ("project_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "mcp_oauth_records" ("project_id" uuid NOT NULL, "model" character varying(64) NOT NULL, "id_hash" text NOT NULL, "payload" jsonb NOT NULL, "grant_id" text, "uid" text, "expires_at" TIMESTAMP WITH TIME ZONE, "consumed_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_113a7e964f2d0099e7e84f20166" PRIMARY KEY ("project_id", "model", "id_hash"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_3ce960d8ea64470d2267422ed9" ON "mcp_oauth_records" ("expires_at")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_b40d7467b85ba32c1ea57d0d93" ON "mcp_oauth_records" ("project_id", "grant_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "mcp_identity_providers" ADD CONSTRAINT "FK_9f49252e9dd771bfdd0b4f75cfd" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "mcp_oauth_records" ADD CONSTRAINT "FK_c1db0049f682076c4f1b7f33e92" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "mcp_oauth_records" DROP CONSTRAINT "FK_c1db0049f682076c4f1b7f33e92"`);
    await queryRunner.query(`ALTER TABLE "mcp_identity_providers" DROP CONSTRAINT "FK_9f49252e9dd771bfdd0b4f75cfd"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_b40d7467b85ba32c1ea57d0d93"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_3ce960d8ea64470d2267422ed9"`);
    await queryRunner.query(`DROP TABLE "mcp_oauth_records"`);
    await queryRunner.query(`DROP TABLE "mcp_identity_providers"`);
  }
}
