import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import type { AppConfigurationSecrets } from '../app-configurations/app-configurations.service.js';
import type { AppSecrets } from '../apps/app.entity.js';
import { AppsRepository, type FunctionWithApp } from '../apps/apps.repository.js';
import { isVisibleTo } from '../catalog-rules/visibility.js';
import { AppConfig } from '../config/app-config.js';
import { ChangeNotifications, type ChangeTopic } from '../database/change-notifications.js';
import type { LinkedAccountEntity } from '../linked-accounts/linked-account.entity.js';
import { LinkedAccountsRepository } from '../linked-accounts/linked-accounts.repository.js';
import { ExecutionRepository } from './execution.repository.js';

/** The tables the hot path caches rows of; the same list has change-counting triggers. */
export type CachedTable = 'apps' | 'functions' | 'app_configurations' | 'linked_accounts';
const CACHED_TABLES: readonly CachedTable[] = ['apps', 'functions', 'app_configurations', 'linked_accounts'];
/** The change topics the services publish after their writes that concern this cache, and the table each drops. */
const TOPICS: Partial<Record<ChangeTopic, CachedTable>> = {
  functions: 'functions',
  app_configurations: 'app_configurations',
  linked_accounts: 'linked_accounts',
};
const MAX_ENTRIES = 20_000;

/**
 * Stands for "no such row" inside lru-cache: a load that yields undefined and is aborted by a clear makes
 * lru-cache reject its callers, where a found row is handed back (`ignoreFetchAbort`); so absent is a value, and
 * it is dropped again as soon as its callers have it.
 */
const ABSENT: unique symbol = Symbol('absent');
type Loaded<V> = V | typeof ABSENT;

/**
 * Loaded rows by key (lru-cache, least recently used dropped beyond MAX_ENTRIES): concurrent misses of one key
 * share one load (`fetch`, given the load as its context); a load that was running when the cache was cleared is
 * returned to its callers but not kept (the clear aborts it, the abort is ignored, and its result lands in a slot
 * that is no longer its own).
 */
export type LoadingCache<V extends object> = LRUCache<string, Loaded<V>, () => Promise<Loaded<V>>>;

export function loadingCache<V extends object>(): LoadingCache<V> {
  return new LRUCache<string, Loaded<V>, () => Promise<Loaded<V>>>({
    max: MAX_ENTRIES,
    ignoreFetchAbort: true,
    fetchMethod: (_key, _stale, { context }) => context(),
  });
}

/** The cached row, when it is: the warm hot path then awaits nothing. */
export function cachedRow<V extends object>(cache: LoadingCache<V>, key: string): V | undefined {
  const value = cache.get(key);
  return value === ABSENT ? undefined : value;
}

/** The row, loaded once however many callers ask at once; an absent row is not kept, so an insert is seen at once. */
export async function loadRow<V extends object>(
  cache: LoadingCache<V>,
  key: string,
  load: () => Promise<V | null>,
): Promise<V | null> {
  const value = await cache.fetch(key, { context: async () => (await load()) ?? ABSENT });
  if (value !== ABSENT) {
    return value ?? null;
  }
  if (cache.peek(key) === ABSENT) {
    cache.delete(key);
  }
  return null;
}

/** A function with its app, as the hot path needs them. */
export interface FunctionView {
  fn: FunctionWithApp;
  /** The app's opened secrets (OAuth 2.0 client secret, default credentials), filled on first use. */
  appSecrets?: AppSecrets;
}

export interface ConfigurationView {
  row: AppConfigurationEntity;
  /** Opened secrets of the overrides, filled on first use. */
  secrets?: AppConfigurationSecrets;
}

export interface AccountView {
  row: LinkedAccountEntity;
  /** Opened (decrypted) credentials, of the shape of the account's scheme, filled on first use. */
  opened?: object;
}

/**
 * The execution hot path's cache of functions (with their apps), app configurations and linked
 * accounts, so that a call costs no database round trip once warm.
 *
 * Invalidation:
 * - the services that change these rows (configurations, linked accounts and their token refresh, the
 *   catalogue import, secrets rotation) publish the change through ChangeNotifications once it is
 *   committed: this instance drops the table's entries at once, other instances on the same PostgreSQL
 *   server when the NOTIFY reaches them (milliseconds);
 * - whatever that misses (a notification lost while a LISTEN connection was down, a row written by hand
 *   in SQL) is bounded by statement triggers that raise a per-table counter (`cache_generations`),
 *   which each instance polls every CACHE_SYNC_INTERVAL_MS, dropping the entries of tables whose
 *   counter moved.
 */
@Injectable()
export class ExecutionCache implements OnApplicationBootstrap, OnModuleDestroy {
  readonly functions = loadingCache<FunctionView>();
  readonly configurations = loadingCache<ConfigurationView>();
  readonly accounts = loadingCache<AccountView>();

  private readonly logger = new Logger('ExecutionCache');
  private readonly unsubscribe: (() => void)[] = [];
  private generations = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private polling = false;

  constructor(
    private readonly changes: ChangeNotifications,
    private readonly repository: ExecutionRepository,
    private readonly appRows: AppsRepository,
    private readonly configurationRows: AppConfigurationsRepository,
    private readonly accountRows: LinkedAccountsRepository,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const [topic, table] of Object.entries(TOPICS) as [ChangeTopic, CachedTable][]) {
      this.unsubscribe.push(this.changes.subscribe(topic, () => this.invalidate(table)));
    }
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.config.CACHE_SYNC_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.unsubscribe.forEach((unsubscribe) => unsubscribe());
  }

  /** The cached rows, when they are: the warm hot path then runs without awaiting anything. */
  cached(
    projectId: string,
    functionName: string,
    ownerId: string,
  ): { function: FunctionView; configuration: ConfigurationView; account: AccountView } | undefined {
    const fn = cachedRow(this.functions, functionName);
    if (!fn || !isVisibleTo(fn.fn.app, projectId)) {
      return undefined;
    }
    const appName = fn.fn.app_name;
    const configuration = cachedRow(this.configurations, `${projectId}\u0000${appName}`);
    const account = cachedRow(this.accounts, `${projectId}\u0000${appName}\u0000${ownerId}`);
    return configuration && account ? { function: fn, configuration, account } : undefined;
  }

  /** The function, when visible to the project (the row is cached for every project, the rule applied on each read). */
  async function(name: string, projectId: string): Promise<FunctionView | null> {
    const view = await loadRow(this.functions, name, async () => {
      const fn = await this.appRows.findVisibleFunctionWithApp(name);
      return fn ? { fn } : null;
    });
    return view && isVisibleTo(view.fn.app, projectId) ? view : null;
  }

  configuration(projectId: string, appName: string): Promise<ConfigurationView | null> {
    return loadRow(this.configurations, `${projectId}\u0000${appName}`, async () => {
      const row = await this.configurationRows.findForProject(projectId, appName);
      return row ? { row } : null;
    });
  }

  account(projectId: string, appName: string, ownerId: string): Promise<AccountView | null> {
    return loadRow(this.accounts, `${projectId}\u0000${appName}\u0000${ownerId}`, async () => {
      const row = await this.accountRows.findByOwner(projectId, appName, ownerId);
      return row ? { row } : null;
    });
  }

  invalidate(table: CachedTable): void {
    switch (table) {
      case 'apps':
      case 'functions':
        this.functions.clear();
        return;
      case 'app_configurations':
        this.configurations.clear();
        return;
      case 'linked_accounts':
        this.accounts.clear();
        return;
    }
  }

  /** Drops the entries of every table another writer changed since the last poll. */
  async poll(): Promise<void> {
    if (this.polling) {
      return;
    }
    this.polling = true;
    try {
      const current = await this.repository.cacheGenerations();
      for (const table of CACHED_TABLES) {
        if (current.get(table) !== this.generations.get(table)) {
          this.invalidate(table);
        }
      }
      this.generations = current;
    } catch (error) {
      this.logger.warn(`Could not check for changes made by other instances: ${(error as Error).message}`);
    } finally {
      this.polling = false;
    }
  }
}
