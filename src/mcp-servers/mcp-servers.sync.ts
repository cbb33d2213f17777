import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '../config/app-config.js';
import { McpServersService } from './mcp-servers.service.js';

/**
 * The periodic sync of remote MCP servers (MCP_SERVERS_SYNC_INTERVAL_S), in the HTTP service only:
 * servers whose tools can be read without an end user's credentials are read again, new and changed
 * tools written, vanished ones deactivated. Several instances may each run it: a sync that finds
 * nothing changed writes nothing.
 */
@Injectable()
export class McpServersSync implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('McpServers');
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly servers: McpServersService,
    private readonly config: AppConfig,
    private readonly http: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    const seconds = this.config.MCP_SERVERS_SYNC_INTERVAL_S;
    if (this.http.httpAdapter && seconds > 0) {
      this.timer = setInterval(() => void this.syncAll(), seconds * 1000).unref();
    }
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  async syncAll(): Promise<void> {
    if (this.running) {
      return;
    }
    this.running = true;
    try {
      for (const outcome of await this.servers.syncAll()) {
        if (outcome.error) {
          this.logger.warn(`Sync of ${outcome.app} failed: ${outcome.error}`);
        }
      }
    } catch (error) {
      this.logger.warn(`Sync of remote MCP servers failed: ${String(error)}`);
    } finally {
      this.running = false;
    }
  }
}
