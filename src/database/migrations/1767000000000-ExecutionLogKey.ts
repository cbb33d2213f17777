import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The execution log keyed by what it is read by: (project, start time, id) is the primary key and
 * the only index, and rows no longer carry a foreign key to their project. Each row written then
 * updates one index and checks nothing, which halves the cost of the log on the embedded database.
 * The log is append-only history: projects are never deleted by the service.
 */
export class ExecutionLogKey1767000000000 implements MigrationInterface {
  name = 'ExecutionLogKey1767000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" DROP CONSTRAINT "FK_4f9a014e78bd37f55509ee3c166"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_f9ad6913debabf148efec8ecf6"`);
    await queryRunner.query(`ALTER TABLE "executions" DROP CONSTRAINT "PK_703e64e0ef651986191844b7b8b"`);
    await queryRunner.query(
      `ALTER TABLE "executions" ADD CONSTRAINT "PK_cf034332215d98f8ae7dcaee2d6" PRIMARY KEY ("project_id", "created_at", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "executions" DROP CONSTRAINT "PK_cf034332215d98f8ae7dcaee2d6"`);
    await queryRunner.query(
      `ALTER TABLE "executions" ADD CONSTRAINT "PK_703e64e0ef651986191844b7b8b" PRIMARY KEY ("id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_f9ad6913debabf148efec8ecf6" ON "executions" ("project_id", "created_at")`,
    );
    await queryRunner.query(
      `ALTER TABLE "executions" ADD CONSTRAINT "FK_4f9a014e78bd37f55509ee3c166" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }
}
