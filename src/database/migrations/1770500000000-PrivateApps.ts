import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A project's own apps (a remote MCP server it added through the API): `visibility = 'private'` and the
 * project that owns the app, the only one that sees it. Deleted with the project.
 */
export class PrivateApps1770500000000 implements MigrationInterface {
  name = 'PrivateApps1770500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "apps" ADD "project_id" uuid`);
    await queryRunner.query(
      `ALTER TABLE "apps" ADD CONSTRAINT "FK_apps_project" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "apps" DROP CONSTRAINT "FK_apps_project"`);
    await queryRunner.query(`ALTER TABLE "apps" DROP COLUMN "project_id"`);
  }
}
