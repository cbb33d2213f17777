import { lookup } from 'node:dns/promises';
import { Injectable } from '@nestjs/common';
import { isPublicAddress } from '../../libs/common/src/index.js';
import { type Actor, CLI_ACTOR, SYSTEM_ACTOR } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { type AppFile, contentHash, type FunctionRecord, functionRecord } from '../catalog/catalog-files.js';
import { CatalogService, type ChangeSummary } from '../catalog/catalog.service.js';
import { appNameFrom } from '../catalog/openapi/openapi-names.js';
import { AppConfig } from '../config/app-config.js';
import {
  type McpEndpoint,
  type McpServerDescription,
  McpUpstream,
  McpUpstreamFailure,
} from '../execution/mcp-upstream.js';
import {
  appFile,
  authOf,
  endpointFor,
  hasCredentials,
  type McpServerAuth,
  storedAppFile,
  unnamedServer,
} from './mcp-server-app.js';
import { McpServerOAuth, NoProtectedResourceMetadata } from './mcp-server-oauth.js';
import { McpServerNameTakenError, McpServerNotFoundError, McpServerRefusedError } from './mcp-servers.errors.js';
import { McpServersRepository } from './mcp-servers.repository.js';
import { mapTools, type SkippedTool, stripControl, ToolNamer } from './mcp-tool-records.js';

export interface AddMcpServerOptions {
  appName?: string;
  displayName?: string;
  categories?: string[];
  /** Detected when absent: a server that lists its tools without credentials is `no_auth`. */
  auth?: McpServerAuth;
  /** A credential used only to read the tool list now (never stored): a bearer token, or the API key. */
  token?: string;
  /** Who the audit log names: the command line unless said. */
  actor?: Actor;
  /** The project that adds the server as its own app (private: no other project sees it); the catalogue's when absent. */
  projectId?: string;
}

export interface McpSyncReport {
  app: string;
  url: string;
  server: { name: string; version: string; protocol_version: string | null };
  security_schemes: string[];
  functions: ChangeSummary & { deactivated: string[] };
  /** Tools not imported, each with its reason; the others were imported regardless. */
  skipped: SkippedTool[];
}

/** Tool records kept at most for one sync (as JSON text): beyond it the remaining tools are skipped. */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;
/** Tools read at most from one server. */
export const MAX_TOOLS = 10_000;

/**
 * Remote MCP servers as apps (`patchbay catalog add-mcp`, `catalog sync`): the server's tools,
 * read page by page with the v2 client, become the app's functions (`protocol: mcp`), checked and
 * written by the catalogue's own writer. A tool the server no longer lists is deactivated, never
 * deleted, so the execution log keeps its name.
 */
@Injectable()
export class McpServersService {
  constructor(
    private readonly upstream: McpUpstream,
    private readonly catalog: CatalogService,
    private readonly servers: McpServersRepository,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly oauth: McpServerOAuth,
  ) {}

  async add(url: string, options: AddMcpServerOptions = {}): Promise<McpSyncReport> {
    const serverUrl = await this.checkedUrl(url);
    let auth: McpServerAuth = options.auth ?? (options.token ? { scheme: 'http_bearer' } : { scheme: 'no_auth' });
    let listing: Listing;
    try {
      listing = await this.read(endpointFor(serverUrl, auth, options.token));
    } catch (error) {
      // A server behind OAuth, and no token to list with: the app is added with its sign-in set up;
      // its tools are read by a sync with an end user's token.
      const signIn =
        error instanceof McpCredentialsRequired && (options.auth === undefined || auth.scheme === 'oauth2');
      if (!signIn) {
        throw error instanceof McpCredentialsRequired ? error.refusal() : error;
      }
      auth = auth.scheme === 'oauth2' ? auth : { scheme: 'oauth2' };
      listing = { description: unnamedServer(serverUrl), pages: [], skipped: [] };
    }
    const info = listing.description.serverInfo;
    const appName = options.appName ?? appNameFrom(info.title ?? info.name);
    const projectId = options.projectId ?? null;
    // A project's app takes its name first, in one statement; the catalogue's never replaces a project's.
    if (projectId ? !(await this.servers.reserveApp(appName, projectId)) : await this.servers.ownerOf(appName)) {
      throw new McpServerNameTakenError(appName);
    }
    try {
      let schemes: Record<string, Record<string, unknown>> | undefined;
      if (auth.scheme === 'oauth2') {
        try {
          schemes = { oauth2: await this.oauth.scheme(serverUrl, auth) };
        } catch (error) {
          // Detected, not asked for: a server without OAuth metadata wants another kind of credential.
          throw error instanceof NoProtectedResourceMetadata && options.auth === undefined
            ? new McpCredentialsRequired(new URL(serverUrl).origin).refusal()
            : error;
        }
      }
      const app = appFile(appName, serverUrl, listing.description, auth, options, schemes);
      return await this.write(app, contentHash(app), serverUrl, listing, auth, {
        actor: options.actor ?? CLI_ACTOR,
        action: 'mcp_server.added',
        projectId,
      });
    } catch (error) {
      if (projectId) {
        await this.servers.releaseApp(appName, projectId);
      }
      throw error;
    }
  }

  /**
   * Reads the server's tools again: new and changed tools written, vanished ones deactivated. With
   * `endpoint` (a change the server announced on a connection held with an end user's credentials),
   * the tools are read with those credentials.
   */
  async sync(
    appName: string,
    options: { token?: string; actor?: Actor; endpoint?: McpEndpoint } = {},
  ): Promise<McpSyncReport> {
    const [server, stored] = await Promise.all([this.servers.findByApp(appName), this.catalog.storedApp(appName)]);
    if (!server || !stored) {
      throw new McpServerNotFoundError(appName);
    }
    const auth = authOf(stored.security_schemes);
    try {
      const listing = await this.read(options.endpoint ?? endpointFor(server.url, auth, options.token));
      // The app row stays as it is (its hash is the stored one): only its functions are written.
      return await this.write(storedAppFile(stored), stored.content_hash, server.url, listing, auth, {
        actor: options.actor ?? CLI_ACTOR,
        action: 'mcp_server.synced',
        projectId: stored.project_id,
      });
    } catch (error) {
      await this.servers.recordSync(appName, { sync_error: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  }

  /**
   * Syncs every server whose tools can be read without an end user's credentials (the periodic sync);
   * one failing server leaves the others synced. Answers what happened to each.
   */
  async syncAll(): Promise<{ app: string; error?: string }[]> {
    const outcomes: { app: string; error?: string }[] = [];
    for (const server of await this.servers.listAll()) {
      const stored = await this.catalog.storedApp(server.app_name);
      if (!stored || authOf(stored.security_schemes).scheme !== 'no_auth') {
        continue;
      }
      try {
        await this.sync(server.app_name, { actor: SYSTEM_ACTOR });
        outcomes.push({ app: server.app_name });
      } catch (error) {
        outcomes.push({ app: server.app_name, error: error instanceof Error ? error.message : String(error) });
      }
    }
    return outcomes;
  }

  /**
   * The apps whose server is at `url` (as registered) that a change announced on a connection opened for
   * `heardBy` concerns: the catalogue's, and a project's own app only when it is `heardBy`.
   */
  async appsAt(url: string, heardBy?: string): Promise<string[]> {
    // A project's own app is synced only with the credentials of a connection opened for it.
    return (await this.servers.findByUrl(url))
      .filter((server) => server.project_id === null || server.app_name === heardBy)
      .map((server) => server.app_name);
  }

  /** The server's description and its tools as checked records (kept as JSON text, bounded in bytes). */
  private async read(endpoint: McpEndpoint): Promise<Listing> {
    const pages: unknown[][] = [];
    let tools = 0;
    const skipped: SkippedTool[] = [];
    let description: McpServerDescription;
    try {
      // Pages are mapped once the app's name is known (it may come from the server's own name).
      description = await this.upstream.describe(endpoint, (page) => {
        const room = MAX_TOOLS - tools;
        pages.push(page.slice(0, Math.max(0, room)));
        for (const tool of page.slice(Math.max(0, room))) {
          const name = (tool as { name?: unknown } | null)?.name;
          skipped.push({ tool: stripControl(String(name)).slice(0, 80), reason: `over ${MAX_TOOLS} tools` });
        }
        tools += page.length;
      });
    } catch (error) {
      if (error instanceof McpUpstreamFailure && error.kind === 'unauthorized' && !hasCredentials(endpoint)) {
        throw new McpCredentialsRequired(new URL(endpoint.url).origin);
      }
      if (error instanceof McpUpstreamFailure) {
        throw new McpServerRefusedError(error.message);
      }
      throw error;
    }
    return { description, pages, skipped };
  }

  private async write(
    app: AppFile,
    appHash: string,
    serverUrl: string,
    listing: Listing,
    auth: McpServerAuth,
    audit: { actor: Actor; action: 'mcp_server.added' | 'mcp_server.synced'; projectId: string | null },
  ): Promise<McpSyncReport> {
    const namer = new ToolNamer(app.name, await this.catalog.mcpToolNames(app.name));
    const records: FunctionRecord[] = [];
    const skipped = [...listing.skipped];
    let bytes = 0;
    for (const page of listing.pages.splice(0)) {
      const { mapped, skipped: refused } = await mapTools(app.name, serverUrl, page, (tool) => namer.nameOf(tool));
      skipped.push(...refused);
      for (const { tool, fn } of mapped) {
        const record = functionRecord(app.name, fn);
        bytes += record.row.length;
        if (bytes > MAX_RECORD_BYTES) {
          skipped.push({ tool, reason: `the server's tools pass ${MAX_RECORD_BYTES} bytes of definitions` });
          continue;
        }
        records.push(record);
      }
    }
    const report = { apps: emptySummary(), functions: emptySummary() };
    await this.catalog.writeApps([{ app, appHash, functions: [records] }], report, { projectId: audit.projectId });
    await this.servers.register(app.name, serverUrl);
    const deactivated = await this.catalog.deactivateFunctionsExcept(
      app.name,
      records.map((record) => record.name),
    );
    await this.catalog.refreshSearch(report);
    const server = listing.description.serverInfo;
    await this.servers.recordSync(app.name, {
      server_name: stripControl(server.name ?? ''),
      server_version: stripControl(server.version ?? ''),
      protocol_version: listing.description.protocolVersion ?? null,
      tool_count: records.length,
      synced_at: new Date(),
      sync_error: null,
    });
    // Recorded right after the writes (the catalogue's transaction, then the server's rows); a sync that
    // changed nothing (the periodic one, mostly) leaves no record.
    const changed = report.functions.added.length + report.functions.updated.length + deactivated.length;
    if (audit.action === 'mcp_server.added' || changed > 0) {
      const where = new URL(serverUrl);
      await this.audit.record({
        projectId: audit.projectId,
        actor: audit.actor,
        action: audit.action,
        resourceId: app.name,
        after: {
          app_name: app.name,
          // Without its query: it may carry a credential.
          url: `${where.origin}${where.pathname}`,
          tool_count: records.length,
          functions_added: report.functions.added.length,
          functions_updated: report.functions.updated.length,
          functions_deactivated: deactivated.length,
        },
      });
    }
    return {
      app: app.name,
      url: serverUrl,
      server: {
        name: stripControl(server.name ?? ''),
        version: stripControl(server.version ?? ''),
        protocol_version: listing.description.protocolVersion ?? null,
      },
      security_schemes: [auth.scheme],
      functions: { ...report.functions, deactivated },
      skipped,
    };
  }

  /** An http(s) URL without credentials in it, on a public address unless configuration allows others. */
  private async checkedUrl(text: string): Promise<string> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new McpServerRefusedError(`${JSON.stringify(text.slice(0, 200))} is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new McpServerRefusedError(`the server URL must be http or https, not ${url.protocol.replace(':', '')}`);
    }
    if (url.username || url.password) {
      throw new McpServerRefusedError('the server URL must not carry a user name or password: use --auth and --token');
    }
    url.hash = '';
    if (!this.config.MCP_SERVERS_ALLOW_PRIVATE_NETWORKS) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      let addresses: { address: string }[];
      try {
        addresses = await lookup(host, { all: true });
      } catch {
        throw new McpServerRefusedError(`the server's host ${host} cannot be resolved`);
      }
      if (addresses.some((entry) => !isPublicAddress(entry.address))) {
        throw new McpServerRefusedError(
          `${host} is a private, loopback or reserved address; set MCP_SERVERS_ALLOW_PRIVATE_NETWORKS=true to allow it`,
        );
      }
    }
    return url.toString();
  }
}

interface Listing {
  description: McpServerDescription;
  pages: unknown[][];
  skipped: SkippedTool[];
}

function emptySummary(): ChangeSummary {
  return { added: [], updated: [], unchanged: 0 };
}

/** The server wants credentials to list its tools and none were given. */
class McpCredentialsRequired extends Error {
  constructor(readonly origin: string) {
    super(`${origin} requires credentials to list its tools`);
  }

  refusal(): McpServerRefusedError {
    return new McpServerRefusedError(
      `${this.origin} requires credentials to list its tools: give --auth oauth2, or --auth bearer (or --auth api-key:HEADER) and --token`,
    );
  }
}
