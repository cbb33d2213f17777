import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { withDatabase } from '../helpers/database-url.js';
import { embeddedEnv, runCli } from '../helpers/cli.js';

export const APP = 'FAULTS_DEMO';
export const SLOW = `${APP}__SLOW`;
export const OWNER = 'fault-user';
/** One key for every process of a test file: a restarted service reads what the previous one wrote. */
const SECRETS_KEY = randomBytes(32).toString('base64');

/**
 * Where a spawned `patchbay serve` keeps its data: a fresh DATA_DIR on the embedded database, or a
 * fresh database copied from the migrated template on the PostgreSQL server (DATABASE_URL set).
 */
export interface ServiceData {
  embedded: boolean;
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

export async function newServiceData(prefix: string): Promise<ServiceData> {
  const template = inject('databaseTemplate');
  const dataDir = mkdtempSync(join(tmpdir(), `patchbay-${prefix}-`));
  if (template.kind === 'embedded') {
    return {
      embedded: true,
      env: (extra = {}) => embeddedEnv(dataDir, extra),
      cleanup: () => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })),
    };
  }
  const name = `patchbay_f_${randomBytes(6).toString('hex')}`;
  const admin = new DataSource({ type: 'postgres', url: template.url });
  await admin.initialize();
  await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template.template}"`);
  const url = withDatabase(template.url, name);
  return {
    embedded: false,
    env: (extra = {}) => ({ ...embeddedEnv(dataDir, extra), DATABASE_URL: url, SECRETS_KEY }),
    cleanup: async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Imports a one-function app calling `upstreamUrl` (GET /slow, no authentication) and creates a
 * project; returns its API key. Runs the real CLI, so on the embedded database call it before serve.
 */
export async function prepareCatalogAndProject(env: NodeJS.ProcessEnv, upstreamUrl: string): Promise<string> {
  const folder = mkdtempSync(join(tmpdir(), 'patchbay-faults-catalog-'));
  try {
    const appDir = join(folder, 'faults_demo');
    mkdirSync(appDir);
    writeFileSync(
      join(appDir, 'app.json'),
      JSON.stringify({
        name: APP,
        display_name: 'Faults Demo',
        provider: 'Patchbay tests',
        version: '1.0.0',
        description: 'An upstream that the fault tests make slow, silent or broken.',
        logo: 'https://example.com/faults.svg',
        categories: ['Testing'],
        visibility: 'public',
        active: true,
        security_schemes: { no_auth: {} },
        default_security_credentials_by_scheme: {},
      }),
    );
    writeFileSync(
      join(appDir, 'functions.json'),
      JSON.stringify([
        {
          name: SLOW,
          description: 'Answers after the upstream decides to',
          tags: ['testing'],
          visibility: 'public',
          active: true,
          protocol: 'rest',
          protocol_data: { method: 'GET', path: '/slow', server_url: upstreamUrl },
          parameters: {
            type: 'object',
            properties: {
              query: {
                type: 'object',
                properties: { n: { type: 'integer', description: 'Request number' } },
                required: ['n'],
                visible: ['n'],
                additionalProperties: false,
              },
            },
            required: ['query'],
            visible: ['query'],
            additionalProperties: false,
          },
        },
      ]),
    );
    const imported = await runCli(['catalog', 'import', appDir], env);
    if (imported.code !== 0) {
      throw new Error(`catalog import failed: ${imported.stderr}`);
    }
    const project = await runCli(['projects', 'create', '--name', 'faults', '--json'], env);
    if (project.code !== 0) {
      throw new Error(`projects create failed: ${project.stderr}`);
    }
    return (JSON.parse(project.stdout) as { api_key: string }).api_key;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A client of the running service with the project's key; answers are parsed when they are JSON. */
/** Longer than any answer the fault tests expect, far shorter than a test's timeout. */
const REQUEST_TIMEOUT_MS = 30_000;

export function client(baseUrl: string, apiKey: string) {
  return async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; ms: number; headers: Headers }> => {
    const started = Date.now();
    // A request that hangs fails here, naming itself, rather than as the whole test's timeout.
    const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    let text: string;
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await response.text();
    } catch (error) {
      throw new Error(
        signal.aborted
          ? `${method} ${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`
          : `${method} ${path}: ${String(error)} (${(error as Error).cause instanceof Error ? String((error as Error).cause) : ''})`,
      );
    }
    const parsed: unknown =
      (response.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
    return { status: response.status, body: parsed, ms: Date.now() - started, headers: response.headers };
  };
}

/** Configures the app and links the owner (no authentication), through the API. */
export async function configureAndLink(call: ReturnType<typeof client>): Promise<void> {
  const configured = await call('POST', '/v1/app-configurations', { app_name: APP, security_scheme: 'no_auth' });
  if (configured.status !== 200) {
    throw new Error(`configuration failed: ${configured.status} ${JSON.stringify(configured.body)}`);
  }
  const linked = await call('POST', '/v1/linked-accounts/no-auth', { app_name: APP, linked_account_owner_id: OWNER });
  if (linked.status !== 200) {
    throw new Error(`linking failed: ${linked.status} ${JSON.stringify(linked.body)}`);
  }
}

export function execute(call: ReturnType<typeof client>, n: number) {
  return call('POST', `/v1/functions/${SLOW}/execute`, {
    function_input: { query: { n } },
    linked_account_owner_id: OWNER,
  });
}
