import type { MigrationInterface, QueryRunner } from 'typeorm';

/** AUDIT_RETENTION_DAYS deletes records by age across every project: an index on their time alone. */
export class AuditRetention1770200000000 implements MigrationInterface {
  name = 'AuditRetention1770200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "IDX_audit_events_time" ON "audit_events" ("created_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_audit_events_time"`);
  }
}
