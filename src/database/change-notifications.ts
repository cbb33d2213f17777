import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';

/** What changed; a listener learns the topic and the project (undefined: any project may be affected). */
export type ChangeTopic = 'api_keys' | 'app_configurations' | 'functions' | 'linked_accounts';
export type ChangeListener = (projectId: string | undefined) => void;

/** The PostgreSQL channel every instance listens on; payload `<sender>:<topic>:<project id or empty>`. */
export const CHANGE_CHANNEL = 'patchbay_changes';
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/**
 * Tells every instance that something changed, after the change is committed: this instance's
 * listeners at once, in-process (so a request sees its own write in the next one); on a PostgreSQL
 * server the other instances through NOTIFY on CHANGE_CHANNEL, received by one dedicated LISTEN
 * connection per instance (opened at the first subscription, reopened when it drops). The embedded
 * database is held by one process, so in-process is everything there. Delivery to other instances
 * is best effort: a failed NOTIFY is logged, not thrown (the write is committed), and after a dropped
 * connection every listener is told that anything may have changed, since notifications sent
 * meanwhile are lost. The execution cache's change counters bound what is lost either way.
 */
@Injectable()
export class ChangeNotifications implements OnApplicationShutdown {
  private readonly logger = new Logger('ChangeNotifications');
  private readonly listeners = new Map<ChangeTopic, Set<ChangeListener>>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectTimer?: NodeJS.Timeout;
  private failures = 0;
  private closed = false;
  /** LISTEN connections opened so far (see `epoch`). */
  private connections = 0;
  /** Tells this instance's own notifications, already delivered in-process, from other instances'. */
  private readonly sender = randomUUID();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** Announces a committed change (of one project, or of every project when none is given). */
  async publish(topic: ChangeTopic, projectId?: string): Promise<void> {
    this.deliver(topic, projectId);
    if (this.config.embedded) {
      return;
    }
    try {
      await this.dataSource.query('SELECT pg_notify($1, $2)', [
        CHANGE_CHANNEL,
        `${this.sender}:${topic}:${projectId ?? ''}`,
      ]);
    } catch (error) {
      this.logger.warn(`Could not tell other instances of a ${topic} change: ${(error as Error).message}`);
    }
  }

  /**
   * Which LISTEN connection this instance hears other instances' changes on: a number that changes whenever
   * the connection is reopened (notifications sent meanwhile are lost), or undefined while there is none.
   * The embedded database has one holder, so there it is always 0. A reader that copied the database's
   * state, and noted the epoch before it started, has missed nothing as long as the epoch is the same.
   */
  get epoch(): number | undefined {
    if (this.config.embedded) {
      return 0;
    }
    return this.client ? this.connections : undefined;
  }

  /** Settles when the attempt to open the LISTEN connection that `subscribe` started has succeeded or failed. */
  async connected(): Promise<void> {
    await this.connecting;
  }

  /** Calls `listener` on each change of `topic`, until the returned function is called. */
  subscribe(topic: ChangeTopic, listener: ChangeListener): () => void {
    let set = this.listeners.get(topic);
    if (!set) {
      set = new Set();
      this.listeners.set(topic, set);
    }
    set.add(listener);
    if (!this.config.embedded && !this.client && !this.connecting && !this.closed) {
      this.connecting = this.listen().finally(() => (this.connecting = null));
    }
    return () => {
      set.delete(listener);
    };
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    await this.connecting;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private deliver(topic: ChangeTopic, projectId: string | undefined): void {
    for (const listener of this.listeners.get(topic) ?? []) {
      try {
        listener(projectId);
      } catch (error) {
        this.logger.error(`A ${topic} change listener failed: ${String(error)}`);
      }
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.config.DATABASE_URL });
    client.on('notification', (message) => this.onNotification(message));
    client.on('error', (error) => {
      this.logger.warn(`LISTEN connection failed: ${error.message}`);
      this.dropped(client);
    });
    client.on('end', () => this.dropped(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (error) {
      this.logger.warn(`Cannot LISTEN for changes: ${(error as Error).message}`);
      await client.end().catch(() => undefined);
      this.scheduleReconnect();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.connections += 1;
    this.client = client;
    if (this.failures > 0) {
      // Whatever was sent while the connection was down is lost: tell everyone to look again.
      for (const topic of this.listeners.keys()) {
        this.deliver(topic, undefined);
      }
    }
    this.failures = 0;
  }

  private onNotification(message: pg.Notification): void {
    if (message.channel !== CHANGE_CHANNEL || !message.payload) {
      return;
    }
    const [sender, topic, projectId] = message.payload.split(':');
    if (sender === this.sender || projectId === undefined) {
      return;
    }
    this.deliver(topic as ChangeTopic, projectId === '' ? undefined : projectId);
  }

  private dropped(client: pg.Client): void {
    if (this.client !== client) {
      return;
    }
    this.client = null;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) {
      return;
    }
    this.failures += 1;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** (this.failures - 1));
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      if (!this.client && !this.connecting && !this.closed) {
        this.connecting = this.listen().finally(() => (this.connecting = null));
      }
    }, delay);
    this.reconnectTimer.unref();
  }
}
