import type { MigrationInterface, QueryRunner } from 'typeorm';

/** API keys may expire, and record when they were last used (written at most once a minute per key). */
export class ApiKeyExpiry1768800000000 implements MigrationInterface {
  name = 'ApiKeyExpiry1768800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "expires_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "last_used_at" TIMESTAMP WITH TIME ZONE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "last_used_at"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "expires_at"`);
  }
}
