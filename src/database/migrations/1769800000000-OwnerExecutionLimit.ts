import type { MigrationInterface, QueryRunner } from 'typeorm';

/** An app configuration's own budget of executions per linked-account owner (src/rate-limits); null: the default. */
export class OwnerExecutionLimit1769800000000 implements MigrationInterface {
  name = 'OwnerExecutionLimit1769800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_configurations" ADD "owner_execution_limit" integer`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_configurations" DROP COLUMN "owner_execution_limit"`);
  }
}
