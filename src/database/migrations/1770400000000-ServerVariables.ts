import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An app configuration's values for the server variables of an imported OpenAPI document (`{}`: the defaults), and
 * the names of its extra credentials (their values are sealed in `secrets`).
 */
export class ServerVariables1770400000000 implements MigrationInterface {
  name = 'ServerVariables1770400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_configurations" ADD "server_variables" jsonb NOT NULL DEFAULT '{}'`);
    await queryRunner.query(
      `ALTER TABLE "app_configurations" ADD "extra_credential_names" text array NOT NULL DEFAULT '{}'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "app_configurations" DROP COLUMN "extra_credential_names"`);
    await queryRunner.query(`ALTER TABLE "app_configurations" DROP COLUMN "server_variables"`);
  }
}
