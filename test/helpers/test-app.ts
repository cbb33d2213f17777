import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { createApiApp } from '../../src/api-app.js';
import { AppConfig } from '../../src/config/app-config.js';
import { ChangeNotifications, type ChangeTopic } from '../../src/database/change-notifications.js';
import type { LogCapture } from './log-capture.js';
import { withDatabase } from './database-url.js';
import { TestContext } from './test-context.js';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  apiKey?: string | null;
  query?: Record<string, string | number | boolean | (string | number | boolean)[] | undefined>;
  body?: unknown;
  /** Raw body text, sent as JSON content type. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** One key per test process, so that apps a test file starts over one database open each other's secrets. */
const TEST_SECRETS_KEY = randomBytes(32).toString('base64');

/**
 * The real service on a loopback port with its own fresh database (a copy of the migrated
 * template), driven through real HTTP.
 */
/** Request and authentication-failure limits are off in tests unless a test turns them on. */
const LIMITS_OFF = { RATE_LIMIT_REQUESTS: '0', AUTH_FAILURE_LIMIT: '0' };

export class TestApp {
  private constructor(
    readonly app: NestFastifyApplication,
    readonly url: string,
    readonly ctx: TestContext,
    private readonly dropDatabase?: () => Promise<void>,
  ) {}

  /**
   * `port`: listen there rather than on any free port (for a PUBLIC_BASE_URL known before the start).
   * `logs`: the real logger writes there, at LOG_LEVEL=trace unless `env` says otherwise.
   */
  static async start(
    env: Record<string, string> = {},
    options: { port?: number; logs?: LogCapture } = {},
  ): Promise<TestApp> {
    const template = inject('databaseTemplate');
    // Passed to the app explicitly; the process environment is read, never written.
    const settings: Record<string, string | undefined> = {
      SECRETS_KEY: TEST_SECRETS_KEY,
      LOG_LEVEL: 'silent',
      ...process.env,
      ...LIMITS_OFF,
      ...(options.logs ? { LOG_LEVEL: 'trace' } : {}),
      ...env,
    };
    let embeddedTemplate: Blob | undefined;
    let dropDatabase: (() => Promise<void>) | undefined;
    if (template.kind === 'embedded') {
      delete settings.DATABASE_URL;
      embeddedTemplate = new Blob([readFileSync(template.dumpPath)]);
    } else {
      const name = `patchbay_t_${randomBytes(6).toString('hex')}`;
      const admin = new DataSource({ type: 'postgres', url: template.url });
      await admin.initialize();
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template.template}"`);
      settings.DATABASE_URL = withDatabase(template.url, name);
      dropDatabase = async () => {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await admin.destroy();
      };
    }
    const app = await createApiApp({
      database: { holder: 'test', embeddedTemplate, runMigrations: true },
      env: settings,
      logDestination: options.logs,
    });
    await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
    const address = app.getHttpServer().address() as { port: number };
    const url = `http://127.0.0.1:${address.port}`;
    return new TestApp(app, url, new TestContext(app), dropDatabase);
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResult<T>> {
    const target = new URL(path, this.url);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value === undefined) {
        continue;
      }
      for (const item of Array.isArray(value) ? value : [value]) {
        target.searchParams.append(key, String(item));
      }
    }
    const headers: Record<string, string> = { ...options.headers };
    const apiKey = options.apiKey === undefined ? this.ctx.defaultApiKey : options.apiKey;
    if (apiKey) {
      headers['x-api-key'] = apiKey;
    }
    let body: string | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
      headers['content-type'] ??= 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(target, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text) {
      parsed = JSON.parse(text);
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }

  post<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('POST', path, { ...options, body });
  }

  put<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PUT', path, { ...options, body });
  }

  patch<T = any>(path: string, body?: unknown, options?: RequestOptions) {
    return this.request<T>('PATCH', path, { ...options, body });
  }

  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }

  get dataSource(): DataSource {
    return this.app.get(DataSource);
  }

  /**
   * After a test wrote rows by hand, past the services: tells the instances what changed, as the services
   * do after their writes (otherwise the cached rows go stale until the change counters are next polled).
   */
  async announce(...topics: ChangeTopic[]): Promise<void> {
    for (const topic of topics) {
      await this.app.get(ChangeNotifications).publish(topic);
    }
  }

  /**
   * Another service instance on this one's PostgreSQL database (migrations already applied), with
   * the same secrets keys unless `env` says otherwise, its configuration passed explicitly. The caller closes it.
   */
  async startAnotherInstance(
    holder = 'another instance',
    env: Record<string, string> = {},
  ): Promise<{ app: NestFastifyApplication; url: string }> {
    const config = this.app.get(AppConfig);
    const app = await createApiApp({
      database: { holder, runMigrations: false },
      env: {
        ...process.env,
        SECRETS_KEY: config.SECRETS_KEY,
        SECRETS_KEYS: config.SECRETS_KEYS,
        LOG_LEVEL: 'silent',
        DATABASE_URL: (this.dataSource.options as { url: string }).url,
        DATABASE_POOL_SIZE: '3',
        ...LIMITS_OFF,
        ...env,
      },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.getHttpServer().address() as { port: number };
    return { app, url: `http://127.0.0.1:${port}` };
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.dropDatabase?.();
  }
}
