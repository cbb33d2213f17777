import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Remote MCP servers added as apps (src/mcp-servers): where each is, and how its last sync went. */
export class McpServers1769710000000 implements MigrationInterface {
  name = 'McpServers1769710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "mcp_servers" ("app_name" text NOT NULL, "url" text NOT NULL, "server_name" text, "server_version" text, "protocol_version" text, "tool_count" integer NOT NULL DEFAULT 0, "synced_at" TIMESTAMP WITH TIME ZONE, "sync_error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_mcp_servers" PRIMARY KEY ("app_name"))`,
    );
    await queryRunner.query(
      `ALTER TABLE "mcp_servers" ADD CONSTRAINT "FK_mcp_servers_app" FOREIGN KEY ("app_name") REFERENCES "apps"("name") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_servers"`);
  }
}
