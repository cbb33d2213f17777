import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import type { AppEntity } from '../apps/app.entity.js';
import { loadConfig } from '../config/app-config.js';
import { FunctionNotFoundError } from '../functions/functions.errors.js';
import type { FunctionWithApp } from '../apps/apps.repository.js';
import type { LinkedAccountEntity } from '../linked-accounts/linked-account.entity.js';
import { ConnectorRegistry } from './connectors/connector-registry.js';
import type { AccountView, ConfigurationView, ExecutionCache, FunctionView } from './execution-cache.js';
import type { ExecutionRecord } from './execution-log.batch.js';
import type { ExecutionLogWriter } from './execution-log.writer.js';
import {
  AppConfigurationDisabledError,
  FunctionInputInvalidError,
  FunctionNotEnabledError,
  LinkedAccountDisabledError,
  LinkedAccountOfOwnerNotFoundError,
  LinkedAccountSchemeMismatchError,
  type RunOutcome,
  SchemeNotOfferedError,
} from './execution.errors.js';
import type { ExecutionRepository } from './execution.repository.js';
import { Metrics } from '../observability/metrics.js';
import { Tracing } from '../observability/tracing.js';
import type { RateLimitsService } from '../rate-limits/rate-limits.service.js';
import { ExecutionService } from './execution.service.js';
import { FunctionRunner } from './function-runner.js';
import { FunctionInputs } from './function-input.js';
import type { McpExecutor } from './mcp-executor.js';
import type { RestExecutor } from './rest-executor.js';
import type { SerializedRequest } from './rest-request.js';
import { ApiKeySchemeStrategy } from './strategies/api-key.strategy.js';
import { HttpBasicSchemeStrategy } from './strategies/http-basic.strategy.js';
import { HttpBearerSchemeStrategy } from './strategies/http-bearer.strategy.js';
import { NoAuthSchemeStrategy } from './strategies/no-auth.strategy.js';
import type { OAuth2SchemeStrategy } from './strategies/oauth2.strategy.js';
import { StoredSecrets } from './stored-secrets.js';

/**
 * The execution pipeline in isolation: the real input preparation, scheme strategies and secret handling,
 * with the rows it runs with held in memory (in place of the hot-path cache) and the upstream exchange
 * answered in memory, so that the request the pipeline builds and what it logs can be read. The same pipeline
 * through HTTP, a real database and real upstream servers: test/e2e/execution.
 */
const box = new SecretBox(randomBytes(32));

const WEATHER = {
  name: 'WEATHER',
  security_schemes: { api_key: { location: 'header', name: 'X-Weather-Key' } },
} as unknown as AppEntity;

const FORECAST: FunctionWithApp = {
  name: 'WEATHER__FORECAST',
  app_name: 'WEATHER',
  app: WEATHER,
  content_hash: 'forecast-v1',
  protocol: 'rest',
  protocol_data: { method: 'GET', path: '/forecast', server_url: 'http://weather.test' },
  parameters: {
    type: 'object',
    properties: {
      query: {
        type: 'object',
        properties: {
          city: { type: 'string' },
          units: { type: 'string', default: 'metric' },
          days: { type: ['integer', 'null'] },
        },
        required: ['city', 'units'],
        visible: ['city', 'days'],
      },
    },
    required: ['query'],
    visible: ['query'],
  },
} as unknown as FunctionWithApp;

const runnable = () => ({
  functions: new Map<string, FunctionView>([[FORECAST.name, { fn: FORECAST }]]),
  configuration: {
    security_scheme: 'api_key',
    enabled: true,
    all_functions_enabled: true,
    enabled_functions: [],
  } as Partial<AppConfigurationEntity> | null,
  account: {
    linked_account_owner_id: 'ann',
    security_scheme: 'api_key',
    enabled: true,
    credentials: box.sealJson({ api_key: 'ann-weather-key' }),
  } as Partial<LinkedAccountEntity> | null,
});

class Rows {
  functions = runnable().functions;
  configuration = runnable().configuration;
  account = runnable().account;
  sent: SerializedRequest[] = [];
  answer: RunOutcome = { success: true, data: { temperature: 21 }, error: null, upstreamStatus: 200 };
  logged: ExecutionRecord[] = [];

  readonly cache = {
    cached: () => undefined,
    function: (name: string) => Promise.resolve(this.functions.get(name) ?? null),
    configuration: () =>
      Promise.resolve(this.configuration && ({ row: this.configuration } as unknown as ConfigurationView)),
    account: () => Promise.resolve(this.account && ({ row: this.account } as unknown as AccountView)),
  };
  readonly rest = {
    execute: (request: SerializedRequest) => {
      this.sent.push(request);
      return Promise.resolve({ ...this.answer });
    },
  };
  readonly log = { record: (row: ExecutionRecord) => this.logged.push(row) };
}

describe('ExecutionService (the execution pipeline)', () => {
  let rows: Rows;
  let service: ExecutionService;

  beforeEach(() => {
    rows = new Rows();
    const secrets = new StoredSecrets(box);
    service = new ExecutionService(
      rows.cache as unknown as ExecutionCache,
      new FunctionInputs(),
      new FunctionRunner(
        rows.rest as unknown as RestExecutor,
        {} as McpExecutor,
        new ConnectorRegistry(),
        loadConfig({}),
        new Metrics(loadConfig({})),
        new Tracing(loadConfig({})),
        new NoAuthSchemeStrategy(),
        new ApiKeySchemeStrategy(secrets),
        new HttpBasicSchemeStrategy(secrets),
        new HttpBearerSchemeStrategy(secrets),
        {} as OAuth2SchemeStrategy,
        secrets,
      ),
      rows.log as unknown as ExecutionLogWriter,
      {} as ExecutionRepository,
      { spendExecution: () => undefined } as unknown as RateLimitsService,
      new Metrics(loadConfig({})),
      new Tracing(loadConfig({})),
    );
  });

  const execute = (input: Record<string, unknown> = { query: { city: 'Oslo' } }, name = FORECAST.name) =>
    service.executeFunction('p1', name, { linked_account_owner_id: 'ann', function_input: input });

  it("sends the validated input with hidden defaults filled and nulls dropped, the account's key injected, and logs the run", async () => {
    const result = await execute({ query: { city: 'Oslo', days: null } });
    expect(result).toEqual({ success: true, data: { temperature: 21 }, error: null });
    expect(rows.sent).toHaveLength(1);
    expect(rows.sent[0]).toMatchObject({ method: 'GET', origin: 'http://weather.test' });
    expect(rows.sent[0].path).toBe('/forecast?city=Oslo&units=metric');
    expect(rows.sent[0].headers['X-Weather-Key'] ?? rows.sent[0].headers['x-weather-key']).toBe('ann-weather-key');
    expect(rows.logged).toEqual([
      expect.objectContaining({
        project_id: 'p1',
        function_name: FORECAST.name,
        linked_account_owner_id: 'ann',
        success: true,
        upstream_status: 200,
        error: null,
      }),
    ]);
  });

  it('refuses input the function schema does not accept, before anything is sent or logged', async () => {
    await expect(execute({ query: { city: 7 } })).rejects.toBeInstanceOf(FunctionInputInvalidError);
    expect(rows.sent).toEqual([]);
    expect(rows.logged).toEqual([]);
  });

  it('runs the pre-checks in the order of their HTTP errors, and sends and logs nothing when one fails', async () => {
    const failures: [() => void, new (...args: never[]) => Error][] = [
      [() => rows.functions.clear(), FunctionNotFoundError],
      [() => (rows.configuration = null), AppConfigurationNotFoundError],
      [() => (rows.configuration = { ...rows.configuration, enabled: false }), AppConfigurationDisabledError],
      [
        () => (rows.configuration = { ...rows.configuration, all_functions_enabled: false, enabled_functions: [] }),
        FunctionNotEnabledError,
      ],
      [() => (rows.account = null), LinkedAccountOfOwnerNotFoundError],
      [() => (rows.account = { ...rows.account, enabled: false }), LinkedAccountDisabledError],
      [() => (rows.account = { ...rows.account, security_scheme: 'http_bearer' }), LinkedAccountSchemeMismatchError],
      [
        () => {
          rows.configuration = { ...rows.configuration, security_scheme: 'http_bearer' };
          rows.account = { ...rows.account, security_scheme: 'http_bearer' };
        },
        SchemeNotOfferedError,
      ],
    ];
    for (const [breakIt, expected] of failures) {
      Object.assign(rows, runnable());
      breakIt();
      await expect(execute(), expected.name).rejects.toBeInstanceOf(expected);
    }
    expect(rows.sent).toEqual([]);
    expect(rows.logged).toEqual([]);
  });

  it('answers an upstream failure as success false, with the credential scrubbed from the error and the log', async () => {
    rows.answer = {
      success: false,
      data: null,
      error: 'Upstream said: key ann-weather-key is over its quota',
      upstreamStatus: 429,
    };
    const result = await execute();
    expect(result).toEqual({ success: false, data: null, error: 'Upstream said: key [redacted] is over its quota' });
    expect(rows.logged[0]).toMatchObject({ success: false, upstream_status: 429, error: result.error });
    expect(JSON.stringify(rows.logged)).not.toContain('ann-weather-key');
  });

  it('a credential sealed with another key is a failed execution, not an error of the service', async () => {
    rows.account = { ...rows.account, credentials: new SecretBox(randomBytes(32)).sealJson({ api_key: 'x' }) };
    const result = await execute();
    expect(result.success).toBe(false);
    expect(result.error).toContain('Cannot read the linked account credentials');
    expect(rows.sent).toEqual([]);
    expect(rows.logged).toEqual([expect.objectContaining({ success: false, upstream_status: null })]);
  });
});
