import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { PeriodicJob } from '../../libs/common/src/index.js';
import { SYSTEM_ACTOR } from '../audit/actor.js';
import { AppConfig } from '../config/app-config.js';
import { type McpEndpoint, McpUpstream } from '../execution/mcp-upstream.js';
import { McpServersService } from './mcp-servers.service.js';

/** A sync runs this long after the first announced change; changes announced meanwhile are read by it too. */
export const LIST_CHANGED_SYNC_DELAY_MS = 1000;

/**
 * Keeps remote MCP servers' tools current, in the HTTP service only:
 * - the periodic sync (MCP_SERVERS_SYNC_INTERVAL_S): servers whose tools can be read without an end
 *   user's credentials are read again;
 * - a server's `notifications/tools/list_changed` on a connection Patchbay holds (one opened by a
 *   call): the apps at that server are synced a moment later, once for a burst of announcements,
 *   with the credentials of the connection that heard the latest.
 * New and changed tools are written, vanished ones deactivated. Several instances may each run it: a
 * sync that finds nothing changed writes nothing.
 */
@Injectable()
export class McpServersSync implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('McpServers');
  private readonly periodic = new PeriodicJob(
    () => this.syncEvery(),
    (error) => this.logger.warn(`Sync of remote MCP servers failed: ${String(error)}`),
  );
  private stopListening?: () => void;
  /** Pending syncs after an announced change, by app: the timer, and the credentials to read with. */
  private readonly announced = new Map<string, { timer: NodeJS.Timeout; endpoint: McpEndpoint }>();

  constructor(
    private readonly servers: McpServersService,
    private readonly upstream: McpUpstream,
    private readonly config: AppConfig,
    private readonly http: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.http.httpAdapter) {
      return;
    }
    const seconds = this.config.MCP_SERVERS_SYNC_INTERVAL_S;
    if (seconds > 0) {
      this.periodic.start(seconds * 1000);
    }
    this.stopListening = this.upstream.onToolsListChanged((server, endpoint) => void this.changed(server, endpoint));
  }

  onModuleDestroy(): void {
    this.periodic.stop();
    this.stopListening?.();
    for (const { timer } of this.announced.values()) {
      clearTimeout(timer);
    }
    this.announced.clear();
  }

  /** One periodic sync now, unless one is under way; failures are logged, never thrown. */
  async syncAll(): Promise<void> {
    try {
      await this.periodic.run();
    } catch (error) {
      this.logger.warn(`Sync of remote MCP servers failed: ${String(error)}`);
    }
  }

  private async syncEvery(): Promise<void> {
    for (const outcome of await this.servers.syncAll()) {
      if (outcome.error) {
        this.logger.warn(`Sync of ${outcome.app} failed: ${outcome.error}`);
      }
    }
  }

  /** A server announced a change of its tools: each app at it is synced after the delay, the latest credentials kept. */
  private async changed(server: string, endpoint: McpEndpoint): Promise<void> {
    let apps: string[];
    try {
      apps = await this.servers.appsAt(server, endpoint.app);
    } catch (error) {
      this.logger.warn(`A tool-list change of ${new URL(server).origin} was not handled: ${String(error)}`);
      return;
    }
    for (const app of apps) {
      const pending = this.announced.get(app);
      if (pending) {
        pending.endpoint = endpoint;
        continue;
      }
      const timer = setTimeout(() => void this.syncAnnounced(app), LIST_CHANGED_SYNC_DELAY_MS);
      timer.unref();
      this.announced.set(app, { timer, endpoint });
    }
  }

  private async syncAnnounced(app: string): Promise<void> {
    const pending = this.announced.get(app);
    this.announced.delete(app);
    if (!pending) {
      return;
    }
    try {
      const report = await this.servers.sync(app, { actor: SYSTEM_ACTOR, endpoint: pending.endpoint });
      this.logger.log(
        `${app}: tool list changed at the server; ${report.functions.added.length} added, ` +
          `${report.functions.updated.length} updated, ${report.functions.deactivated.length} deactivated`,
      );
    } catch (error) {
      this.logger.warn(`Sync of ${app} after its server's tool-list change failed: ${String(error)}`);
    }
  }
}
