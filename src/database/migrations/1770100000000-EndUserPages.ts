import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the end-user pages show (issue #30): a project's own branding and the address of its app, the end user's
 * display name on a connect link, and the registered name of the MCP client an OAuth-issued token belongs to.
 */
export class EndUserPages1770100000000 implements MigrationInterface {
  name = 'EndUserPages1770100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "projects" ADD "display_name" text, ADD "logo_url" text, ADD "accent_color" character varying(7), ADD "home_url" text`,
    );
    await queryRunner.query(`ALTER TABLE "connect_links" ADD "owner_display_name" character varying(255)`);
    await queryRunner.query(`ALTER TABLE "mcp_tokens" ADD "client_id" text, ADD "client_name" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "mcp_tokens" DROP COLUMN "client_name", DROP COLUMN "client_id"`);
    await queryRunner.query(`ALTER TABLE "connect_links" DROP COLUMN "owner_display_name"`);
    await queryRunner.query(
      `ALTER TABLE "projects" DROP COLUMN "home_url", DROP COLUMN "accent_color", DROP COLUMN "logo_url", DROP COLUMN "display_name"`,
    );
  }
}
