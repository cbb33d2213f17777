import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Connect links: a single-use link (only its token's hash is stored) to a page where an end user
 * links their own account; its status, outcome, optional after-redirect and webhook, and the
 * counters of the page's rate limit.
 */
export class ConnectLinks1768100000000 implements MigrationInterface {
  name = 'ConnectLinks1768100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "connect_links" ("id" uuid NOT NULL, "project_id" uuid NOT NULL, "app_name" text NOT NULL, "linked_account_owner_id" character varying(255) NOT NULL, "token_hash" text NOT NULL, "status" text NOT NULL, "linked_account_id" uuid, "after_link_redirect_url" text, "webhook_url" text, "webhook_secret" text, "oauth2_started_at" TIMESTAMP WITH TIME ZONE, "post_count" integer NOT NULL DEFAULT '0', "post_window_started_at" TIMESTAMP WITH TIME ZONE, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "completed_at" TIMESTAMP WITH TIME ZONE, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_68cdf3e92f6a5e0ba2cd4297ec4" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_bc3ddc3c84d62c6e9a8d8f14c3" ON "connect_links" ("project_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_8af8b1890e20b83d431ab652d0" ON "connect_links" ("token_hash")`);
    await queryRunner.query(
      `ALTER TABLE "connect_links" ADD CONSTRAINT "FK_bc3ddc3c84d62c6e9a8d8f14c35" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "connect_links" ADD CONSTRAINT "FK_c8dfd30f29ffaea12ce2ee33e94" FOREIGN KEY ("app_name") REFERENCES "apps"("name") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "connect_links"`);
  }
}
