import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The execution log: one row per function execution, never inputs or credentials. */
export class ExecutionLog1764000000001 implements MigrationInterface {
  name = 'ExecutionLog1764000000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "executions" ("id" uuid NOT NULL, "project_id" uuid NOT NULL, "app_name" text NOT NULL, "function_name" text NOT NULL, "linked_account_owner_id" character varying(255) NOT NULL, "success" boolean NOT NULL, "upstream_status" integer, "duration_ms" integer NOT NULL, "error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_703e64e0ef651986191844b7b8b" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_f9ad6913debabf148efec8ecf6" ON "executions" ("project_id", "created_at")`,
    );
    await queryRunner.query(
      `ALTER TABLE "executions" ADD CONSTRAINT "FK_4f9a014e78bd37f55509ee3c166" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "executions"`);
  }
}
