import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Marks linked accounts whose OAuth 2.0 refresh token the provider refused, so that they get re-linked. */
export class LinkedAccountNeedsRelink1764000000000 implements MigrationInterface {
  name = 'LinkedAccountNeedsRelink1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "linked_accounts" ADD "needs_relink" boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "linked_accounts" DROP COLUMN "needs_relink"`);
  }
}
