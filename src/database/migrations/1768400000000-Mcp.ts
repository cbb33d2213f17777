import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The MCP server: owner-scoped tokens (hashed), sessions whose negotiated state every instance can
 * read, and the origin of each execution (REST or MCP, with the token used).
 */
export class Mcp1768400000000 implements MigrationInterface {
  name = 'Mcp1768400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "mcp_tokens" ("id" uuid NOT NULL, "project_id" uuid NOT NULL, "linked_account_owner_id" character varying(255) NOT NULL, "apps" text array, "token_hash" text NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "revoked_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_mcp_tokens" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "mcp_sessions" ("id" uuid NOT NULL, "project_id" uuid NOT NULL, "mcp_token_id" uuid, "protocol_version" text NOT NULL, "client_capabilities" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_mcp_sessions" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_dcf7dffb957888d2072c27ea30" ON "mcp_tokens"("project_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_55a1061b883daa0da7c5113877" ON "mcp_tokens"("token_hash")`);
    await queryRunner.query(`CREATE INDEX "IDX_d28bf42079e5814498ddcc66d7" ON "mcp_sessions"("created_at")`);
    await queryRunner.query(
      `ALTER TABLE "mcp_sessions" ADD CONSTRAINT "FK_138d33a11bee570d94998966308" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "mcp_tokens" ADD CONSTRAINT "FK_dcf7dffb957888d2072c27ea302" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(`ALTER TABLE "executions" ADD "source" text NOT NULL DEFAULT 'rest'`);
    await queryRunner.query(`ALTER TABLE "executions" ADD "mcp_token_id" uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "mcp_token_id"`);
    await queryRunner.query(`ALTER TABLE "executions" DROP COLUMN "source"`);
    await queryRunner.query(`DROP TABLE "mcp_sessions"`);
    await queryRunner.query(`DROP TABLE "mcp_tokens"`);
  }
}
