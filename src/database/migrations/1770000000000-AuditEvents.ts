import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log (src/audit): one row per administrative change, only ever inserted. Plain SQL that the
 * embedded database and a PostgreSQL server both run; no foreign key to projects, so that the record
 * outlives what it describes.
 */
export class AuditEvents1770000000000 implements MigrationInterface {
  name = 'AuditEvents1770000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "audit_events" ("id" uuid NOT NULL, "project_id" uuid, "actor_type" character varying(16) NOT NULL, "actor_id" text, "action" character varying(64) NOT NULL, "resource_type" character varying(64) NOT NULL, "resource_id" text, "before" jsonb, "after" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(), CONSTRAINT "PK_audit_events" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_events_project_time" ON "audit_events" ("project_id", "created_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_events_project_resource" ON "audit_events" ("project_id", "resource_type", "resource_id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_events_project_resource"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_events_project_time"`);
    await queryRunner.query(`DROP TABLE "audit_events"`);
  }
}
