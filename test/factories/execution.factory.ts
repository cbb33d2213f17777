import { randomUUID } from 'node:crypto';
import type { QueryDeepPartialEntity } from 'typeorm';
import { SecretBox } from '../../libs/common/src/index.js';
import { AppConfigurationEntity } from '../../src/app-configurations/app-configuration.entity.js';
import type { AppEntity, AppSecrets } from '../../src/apps/app.entity.js';
import type { SecurityScheme } from '../../src/apps/security-scheme.js';
import type { FunctionEntity } from '../../src/functions/function.entity.js';
import { LinkedAccountEntity } from '../../src/linked-accounts/linked-account.entity.js';
import type { HttpResult, TestApp } from '../helpers/test-app.js';

/**
 * Rows for execution tests, written straight into the tables with credentials sealed by the
 * service's own SecretBox (the configuration and linking endpoints are not needed to run a function).
 */
export interface ConfigurationOptions extends Partial<AppConfigurationEntity> {
  /** Sealed into `secrets` as the override's client secret. */
  oauth2ClientSecret?: string;
}

export async function insertConfiguration(
  app: TestApp,
  projectId: string,
  appName: string,
  options: ConfigurationOptions = {},
): Promise<AppConfigurationEntity> {
  const { oauth2ClientSecret, ...overrides } = options;
  const row = Object.assign(new AppConfigurationEntity(), {
    id: randomUUID(),
    project_id: projectId,
    app_name: appName,
    security_scheme: 'no_auth',
    security_scheme_overrides: {},
    secrets: oauth2ClientSecret ? seal(app, { oauth2_client_secret: oauth2ClientSecret }) : null,
    enabled: true,
    all_functions_enabled: true,
    enabled_functions: [],
    ...overrides,
  });
  const repository = app.dataSource.getRepository(AppConfigurationEntity);
  await repository.insert(row as QueryDeepPartialEntity<AppConfigurationEntity>);
  return repository.findOneByOrFail({ id: row.id });
}

export async function insertAccount(
  app: TestApp,
  projectId: string,
  appName: string,
  scheme: SecurityScheme,
  credentials: Record<string, unknown>,
  overrides: Partial<LinkedAccountEntity> = {},
): Promise<LinkedAccountEntity> {
  const row = Object.assign(new LinkedAccountEntity(), {
    id: randomUUID(),
    project_id: projectId,
    app_name: appName,
    linked_account_owner_id: `owner-${randomUUID().slice(0, 8)}`,
    security_scheme: scheme,
    credentials: seal(app, credentials),
    enabled: true,
    ...overrides,
  });
  const repository = app.dataSource.getRepository(LinkedAccountEntity);
  await repository.insert(row);
  return repository.findOneByOrFail({ id: row.id });
}

export function seal(app: TestApp, value: unknown): string {
  return app.app.get(SecretBox).sealJson(value);
}

export function openCredentials<T>(app: TestApp, sealed: string): T {
  return app.app.get(SecretBox).openJson<T>(sealed);
}

export interface ScenarioOptions {
  scheme: SecurityScheme;
  /** The app's settings for `scheme` (`{}` for no_auth, http_basic, http_bearer). */
  settings?: Record<string, unknown>;
  /** Sealed into `apps.secrets`. */
  appSecrets?: AppSecrets;
  function?: Partial<FunctionEntity>;
  /** The linked account's credentials for `scheme`. */
  credentials?: Record<string, unknown>;
  configuration?: ConfigurationOptions;
  account?: Partial<LinkedAccountEntity>;
  /** Project of the configuration and account. */
  projectId: string;
}

export interface Scenario {
  projectId: string;
  app: AppEntity;
  fn: FunctionEntity;
  configuration: AppConfigurationEntity;
  account: LinkedAccountEntity;
  owner: string;
  execute: (functionInput?: unknown, options?: { owner?: string; apiKey?: string }) => Promise<HttpResult>;
}

/** A function without input that GETs `<serverUrl>/ping`: the one tool of the MCP clients' tests. */
export function pingFunction(serverUrl: string): Partial<FunctionEntity> {
  return {
    protocol: 'rest',
    protocol_data: { method: 'GET', path: '/ping', server_url: serverUrl },
    parameters: { type: 'object', properties: {}, required: [], visible: [] },
  };
}

/** An app offering one scheme, one function of it, a configuration with that scheme and a linked account. */
export async function executionScenario(app: TestApp, options: ScenarioOptions): Promise<Scenario> {
  const projectId = options.projectId;
  const appRow = await app.ctx.newApp({
    security_schemes: { [options.scheme]: options.settings ?? {} },
    secrets: options.appSecrets ? seal(app, options.appSecrets) : null,
  });
  const fn = await app.ctx.newFunction(appRow.name, options.function ?? {});
  const configuration = await insertConfiguration(app, projectId, appRow.name, {
    security_scheme: options.scheme,
    ...options.configuration,
  });
  const account = await insertAccount(
    app,
    projectId,
    appRow.name,
    options.scheme,
    options.credentials ?? {},
    options.account ?? {},
  );
  return {
    projectId,
    app: appRow,
    fn,
    configuration,
    account,
    owner: account.linked_account_owner_id,
    execute: (functionInput, executeOptions = {}) =>
      app.post(
        `/v1/functions/${fn.name}/execute`,
        {
          ...(functionInput === undefined ? {} : { function_input: functionInput }),
          linked_account_owner_id: executeOptions.owner ?? account.linked_account_owner_id,
        },
        executeOptions.apiKey ? { apiKey: executeOptions.apiKey } : undefined,
      ),
  };
}
