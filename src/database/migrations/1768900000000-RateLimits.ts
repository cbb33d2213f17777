import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Rate-limit cells every instance shares (src/rate-limits); UNLOGGED: losing them in a crash only resets the limits. */
export class RateLimits1768900000000 implements MigrationInterface {
  name = 'RateLimits1768900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE UNLOGGED TABLE "rate_limits" ("key" text NOT NULL, "tat_ms" double precision NOT NULL, CONSTRAINT "PK_rate_limits" PRIMARY KEY ("key"))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "rate_limits"`);
  }
}
