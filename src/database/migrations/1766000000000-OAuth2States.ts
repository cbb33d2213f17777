import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Server-side state of OAuth 2.0 linking flows: the browser carries only an opaque random state,
 * whose hash keys the row holding the project, app, owner, client, sealed PKCE verifier and
 * redirect addresses until the callback consumes it.
 */
export class OAuth2States1766000000000 implements MigrationInterface {
  name = 'OAuth2States1766000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "oauth2_states" ("state_hash" text NOT NULL, "project_id" uuid NOT NULL, "app_name" text NOT NULL, "linked_account_owner_id" character varying(255) NOT NULL, "client_id" text NOT NULL, "code_verifier" text NOT NULL, "redirect_uri" text NOT NULL, "scope" text, "after_redirect_url" text, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_5477a436431a3b92fa0b2409810" PRIMARY KEY ("state_hash"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_4fd4cd9b8e12032cb0a209c4f4" ON "oauth2_states"("expires_at")`);
    await queryRunner.query(
      `ALTER TABLE "oauth2_states" ADD CONSTRAINT "FK_beffd6e4bb1cd278c17147af4bd" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "oauth2_states" ADD CONSTRAINT "FK_724cc97bc033dd1fbf95c472906" FOREIGN KEY ("app_name") REFERENCES "apps"("name") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "oauth2_states"`);
  }
}
