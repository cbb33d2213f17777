import { Injectable } from '@nestjs/common';
import type { Actor } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { CatalogService } from '../catalog/catalog.service.js';
import type {
  McpServerCreate,
  McpServerPublic,
  McpServerRemoved,
  McpServerSyncReport,
  McpServerSyncRequest,
} from './mcp-servers.dto.js';
import { McpServerRefusedError, ProjectMcpServerNotFoundError } from './mcp-servers.errors.js';
import { McpServersRepository, type ProjectMcpServer } from './mcp-servers.repository.js';
import type { McpServerAuth } from './mcp-server-app.js';
import { McpServersService, type McpSyncReport } from './mcp-servers.service.js';

/**
 * A project's own remote MCP servers, through the API: each is a private app that only the project
 * sees (listed, searched by name, configured, linked, executed, offered over MCP), added, synced and
 * removed by the project, under the same rules as `patchbay catalog add-mcp` (the address checks, the
 * tool mapping, OAuth discovery and registration).
 */
@Injectable()
export class ProjectMcpServersService {
  constructor(
    private readonly servers: McpServersService,
    private readonly rows: McpServersRepository,
    private readonly catalog: CatalogService,
    private readonly audit: AuditService,
  ) {}

  async add(projectId: string, actor: Actor, input: McpServerCreate): Promise<McpServerSyncReport> {
    const report = await this.servers.add(input.url, {
      projectId,
      actor,
      appName: input.app_name,
      displayName: input.display_name,
      categories: input.categories,
      auth: input.auth === undefined ? undefined : authOf(input),
      token: input.token,
    });
    return syncReport(report);
  }

  async list(projectId: string): Promise<McpServerPublic[]> {
    return (await this.rows.listForProject(projectId)).map(serverPublic);
  }

  async get(projectId: string, appName: string): Promise<McpServerPublic> {
    return serverPublic(await this.owned(projectId, appName));
  }

  async sync(
    projectId: string,
    actor: Actor,
    appName: string,
    input: McpServerSyncRequest,
  ): Promise<McpServerSyncReport> {
    await this.owned(projectId, appName);
    return syncReport(await this.servers.sync(appName, { token: input.token, actor }));
  }

  /** The app, its functions, and the project's configuration and linked accounts of it; the execution log stays. */
  async remove(projectId: string, actor: Actor, appName: string): Promise<McpServerRemoved> {
    const server = await this.owned(projectId, appName);
    const accounts = await this.rows.removeProjectApp(appName, projectId);
    if (accounts === null) {
      throw new ProjectMcpServerNotFoundError(appName);
    }
    await this.catalog.appRemoved();
    const where = new URL(server.url);
    await this.audit.record({
      projectId,
      actor,
      action: 'mcp_server.removed',
      resourceId: appName,
      before: { app_name: appName, url: `${where.origin}${where.pathname}`, tool_count: server.tool_count },
    });
    return { app_name: appName, linked_accounts_deleted: accounts };
  }

  /** The project's own server; another project's, or a catalogue app, is not found. */
  private async owned(projectId: string, appName: string): Promise<ProjectMcpServer> {
    const [server] = await this.rows.listForProject(projectId, appName);
    if (!server) {
      throw new ProjectMcpServerNotFoundError(appName);
    }
    return server;
  }
}

function authOf(input: McpServerCreate): McpServerAuth {
  if (input.auth !== 'oauth2' && (input.client_id !== undefined || input.client_secret !== undefined)) {
    throw new McpServerRefusedError('client_id and client_secret go with auth oauth2');
  }
  if (input.auth !== 'api_key' && input.api_key_header !== undefined) {
    throw new McpServerRefusedError('api_key_header goes with auth api_key');
  }
  if (input.client_secret !== undefined && input.client_id === undefined) {
    throw new McpServerRefusedError('client_secret goes with client_id');
  }
  switch (input.auth) {
    case 'oauth2':
      return { scheme: 'oauth2', clientId: input.client_id, clientSecret: input.client_secret };
    case 'api_key':
      if (input.api_key_header === undefined) {
        throw new McpServerRefusedError('auth api_key needs api_key_header: the header that carries the key');
      }
      return { scheme: 'api_key', header: input.api_key_header };
    case 'bearer':
      return { scheme: 'http_bearer' };
    case 'none':
    case undefined:
      return { scheme: 'no_auth' };
  }
}

function syncReport(report: McpSyncReport): McpServerSyncReport {
  return {
    app_name: report.app,
    url: report.url,
    server: report.server,
    security_schemes: report.security_schemes,
    functions: report.functions,
    skipped: report.skipped,
  };
}

function serverPublic(server: ProjectMcpServer): McpServerPublic {
  return {
    app_name: server.app_name,
    display_name: server.app.display_name,
    url: server.url,
    visibility: 'private',
    security_schemes: Object.keys(server.app.security_schemes),
    server_name: server.server_name,
    server_version: server.server_version,
    protocol_version: server.protocol_version,
    tool_count: server.tool_count,
    synced_at: server.synced_at?.toISOString() ?? null,
    sync_error: server.sync_error,
    created_at: server.created_at.toISOString(),
  };
}
