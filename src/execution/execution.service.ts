import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { parseDateTime } from '../../libs/common/src/index.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import type { SecurityScheme } from '../apps/security-scheme.js';
import { AppConfig } from '../config/app-config.js';
import { SpanKind } from '@opentelemetry/api';
import type { McpProtocolData } from '../functions/function.entity.js';
import { FunctionNotFoundError } from '../functions/functions.errors.js';
import { Metrics } from '../observability/metrics.js';
import { Tracing } from '../observability/tracing.js';
import { type RateLimitHeaders, RateLimitsService } from '../rate-limits/rate-limits.service.js';
import type { Connector } from './connectors/connector.js';
import { ConnectorRegistry } from './connectors/connector-registry.js';
import { type AccountView, type ConfigurationView, ExecutionCache, type FunctionView } from './execution-cache.js';
import type { ExecutionSource } from './execution.entity.js';
import { ExecutionLogWriter } from './execution-log.writer.js';
import type {
  ExecutionPublic,
  FunctionExecute,
  FunctionExecutionResult,
  ListExecutionsQuery,
} from './execution.dto.js';
import {
  AppConfigurationDisabledError,
  ExecutionFailure,
  FunctionInputInvalidError,
  FunctionNotEnabledError,
  LinkedAccountDisabledError,
  LinkedAccountOfOwnerNotFoundError,
  LinkedAccountSchemeMismatchError,
  type RunOutcome,
  SchemeNotOfferedError,
} from './execution.errors.js';
import { ExecutionRepository } from './execution.repository.js';
import { FunctionInputs } from './function-input.js';
import { McpExecutor } from './mcp-executor.js';
import { RestExecutor } from './rest-executor.js';
import { buildOpenApiRequest, type OpenApiProtocol, withServerVariables } from './openapi-request.js';
import { ServerVariableError } from '../functions/openapi-wire.js';
import { InexpressibleInputError } from './parameter-styles.js';
import { extraCredentials } from './security-requirements.js';
import { StoredSecrets } from './stored-secrets.js';
import {
  buildRestRequest,
  placeValue,
  RequestBuildError,
  type RestProtocol,
  type SerializedRequest,
  serializeRequest,
} from './rest-request.js';
import { ApiKeySchemeStrategy } from './strategies/api-key.strategy.js';
import { HttpBasicSchemeStrategy } from './strategies/http-basic.strategy.js';
import { HttpBearerSchemeStrategy } from './strategies/http-bearer.strategy.js';
import { NoAuthSchemeStrategy } from './strategies/no-auth.strategy.js';
import { OAuth2SchemeStrategy } from './strategies/oauth2.strategy.js';
import type { Authorization, ExecutionTarget, SecuritySchemeStrategy } from './strategies/security-scheme.strategy.js';
import { enablesFunction } from '../catalog-rules/runnable.js';

/** Who called, for the execution log (REST when not given). */
export interface ExecutionOrigin {
  source: ExecutionSource;
  mcpTokenId?: string | null;
  /** Told the owner's budget when one applies and granted the execution (for the answer's `RateLimit-*` fields). */
  onBudget?: (headers: RateLimitHeaders) => void;
}

/** Longest error text kept in the execution log. */
const MAX_LOGGED_ERROR = 2000;
/** Secrets shorter than this are not scrubbed from messages: they would match ordinary text. */
const MIN_SCRUBBED_SECRET = 4;

/**
 * Runs a catalogue function for a linked-account owner: the pre-checks (each an HTTP error), then
 * the shared pipeline (validate, fill invisible defaults, drop nulls), then the configured scheme's
 * strategy and the function's protocol executor. Every run is recorded in the execution log.
 */
@Injectable()
export class ExecutionService {
  constructor(
    private readonly cache: ExecutionCache,
    private readonly inputs: FunctionInputs,
    private readonly rest: RestExecutor,
    private readonly mcp: McpExecutor,
    private readonly connectors: ConnectorRegistry,
    private readonly log: ExecutionLogWriter,
    private readonly repository: ExecutionRepository,
    private readonly config: AppConfig,
    private readonly limits: RateLimitsService,
    private readonly metrics: Metrics,
    private readonly tracing: Tracing,
    private readonly noAuth: NoAuthSchemeStrategy,
    private readonly apiKey: ApiKeySchemeStrategy,
    private readonly httpBasic: HttpBasicSchemeStrategy,
    private readonly httpBearer: HttpBearerSchemeStrategy,
    private readonly oauth2: OAuth2SchemeStrategy,
    private readonly secrets: StoredSecrets,
  ) {}

  executeFunction(
    projectId: string,
    functionName: string,
    body: FunctionExecute,
    origin?: ExecutionOrigin,
  ): Promise<FunctionExecutionResult> {
    if (!this.tracing.enabled) {
      return this.execute(projectId, functionName, body, origin);
    }
    return this.tracing.span('execution', { 'patchbay.function': functionName }, () =>
      this.execute(projectId, functionName, body, origin),
    );
  }

  private async execute(
    projectId: string,
    functionName: string,
    body: FunctionExecute,
    origin?: ExecutionOrigin,
  ): Promise<FunctionExecutionResult> {
    const startedAtMs = Date.now();
    const started = performance.now();
    const target = await this.target(projectId, functionName, body.linked_account_owner_id);
    const fn = target.function.fn;
    this.tracing.current()?.setAttributes({
      'patchbay.app': fn.app_name,
      'patchbay.security_scheme': target.configuration.row.security_scheme,
    });
    const spending = this.limits.spendExecution(projectId, body.linked_account_owner_id, {
      name: fn.app_name,
      limit: target.configuration.row.owner_execution_limit,
    });
    if (spending) {
      const budget = await spending;
      origin?.onBudget?.(budget);
    }
    let outcome: RunOutcome;
    try {
      const input = this.inputs.prepare(fn, body.function_input ?? {});
      outcome = await this.run(target, input);
    } catch (error) {
      if (!(error instanceof ExecutionFailure)) {
        throw error;
      }
      outcome = { success: false, data: null, error: error.message, upstreamStatus: null };
    }
    this.metrics.execution(fn.app_name, target.configuration.row.security_scheme, outcome.success);
    this.log.record({
      project_id: projectId,
      app_name: fn.app_name,
      function_name: fn.name,
      linked_account_owner_id: body.linked_account_owner_id,
      success: outcome.success,
      upstream_status: outcome.upstreamStatus,
      duration_ms: Math.round(performance.now() - started),
      error: outcome.error === null ? null : outcome.error.slice(0, MAX_LOGGED_ERROR),
      started_at_ms: startedAtMs,
      source: origin?.source,
      mcp_token_id: origin?.mcpTokenId,
    });
    return { success: outcome.success, data: outcome.data, error: outcome.error };
  }

  async listExecutions(projectId: string, query: ListExecutionsQuery): Promise<ExecutionPublic[]> {
    // Rows still buffered in this instance belong in the answer.
    await this.log.flush();
    const rows = await this.repository.listExecutions(projectId, {
      functionName: query.function_name,
      appName: query.app_name,
      ownerId: query.linked_account_owner_id,
      success: query.success,
      since: query.since === undefined ? undefined : parseDateTime(query.since),
      limit: query.limit,
      offset: query.offset,
    });
    return rows.map((row) => ({
      id: row.id,
      app_name: row.app_name,
      function_name: row.function_name,
      linked_account_owner_id: row.linked_account_owner_id,
      success: row.success,
      upstream_status: row.upstream_status,
      duration_ms: row.duration_ms,
      error: row.error,
      created_at: row.created_at.toISOString(),
      source: row.source,
      mcp_token_id: row.mcp_token_id,
    }));
  }

  /** Pre-checks 1–4, in the order of their HTTP errors; the rows come from the hot-path cache. */
  private async target(projectId: string, functionName: string, ownerId: string): Promise<ExecutionTarget> {
    const cached = this.cache.cached(projectId, functionName, ownerId);
    if (cached) {
      return this.check(projectId, ownerId, cached.function, cached.configuration, cached.account);
    }
    const fnView = await this.cache.function(functionName);
    if (!fnView) {
      throw new FunctionNotFoundError(functionName);
    }
    const [configuration, account] = await Promise.all([
      this.cache.configuration(projectId, fnView.fn.app_name),
      this.cache.account(projectId, fnView.fn.app_name, ownerId),
    ]);
    return this.check(projectId, ownerId, fnView, configuration, account);
  }

  private check(
    projectId: string,
    ownerId: string,
    fnView: FunctionView,
    configuration: ConfigurationView | null,
    account: AccountView | null,
  ): ExecutionTarget {
    const fn = fnView.fn;
    if (!configuration) {
      throw new AppConfigurationNotFoundError(fn.app_name);
    }
    const config = configuration.row;
    if (!config.enabled) {
      throw new AppConfigurationDisabledError(fn.app_name);
    }
    if (!enablesFunction(config, fn.name)) {
      throw new FunctionNotEnabledError(fn.name, fn.app_name);
    }
    if (!account) {
      throw new LinkedAccountOfOwnerNotFoundError(fn.app_name, ownerId);
    }
    if (!account.row.enabled) {
      throw new LinkedAccountDisabledError(fn.app_name, ownerId);
    }
    if (account.row.security_scheme !== config.security_scheme) {
      throw new LinkedAccountSchemeMismatchError(
        fn.app_name,
        ownerId,
        account.row.security_scheme,
        config.security_scheme,
      );
    }
    if (!fn.app.security_schemes[config.security_scheme]) {
      throw new SchemeNotOfferedError(fn.app_name, config.security_scheme);
    }
    return { projectId, function: fnView, configuration, account };
  }

  private async run(target: ExecutionTarget, input: Record<string, unknown>): Promise<RunOutcome> {
    const authorization = this.withExtraCredentials(
      target,
      await this.strategy(target.configuration.row.security_scheme).authorize(target),
    );
    const fn = target.function.fn;
    let outcome: RunOutcome;
    try {
      switch (fn.protocol) {
        case 'rest':
          outcome = await this.runRest(
            fn.app_name,
            fn.name,
            fn.protocol_data as RestProtocol,
            input,
            authorization,
            target.configuration.row.server_variables,
          );
          break;
        case 'connector':
          outcome = await this.runConnector(fn.name, input, authorization, target);
          break;
        case 'mcp':
          outcome = await this.mcp.execute(fn.protocol_data as McpProtocolData, input, authorization);
          break;
      }
    } catch (error) {
      if (!(error instanceof ExecutionFailure)) {
        throw error;
      }
      outcome = { success: false, data: null, error: error.message, upstreamStatus: null };
    }
    if (outcome.error !== null) {
      outcome.error = scrub(outcome.error, authorization.secrets);
    }
    return outcome;
  }

  /**
   * The authorization with the credentials an operation's combined requirement needs beside the account's
   * (extraCredentials); the same authorization for every other function.
   */
  private withExtraCredentials(target: ExecutionTarget, authorization: Authorization): Authorization {
    const requirements = (target.function.fn.protocol_data as RestProtocol).openapi?.security;
    if (requirements === undefined) {
      return authorization;
    }
    const given = this.secrets.configuration(target.configuration).extra_credentials ?? {};
    const extras = extraCredentials(
      target.function.fn.name,
      requirements,
      target.configuration.row.security_scheme,
      given,
    );
    if (extras.length === 0) {
      return authorization;
    }
    return {
      credentials: authorization.credentials,
      secrets: [...authorization.secrets, ...extras.map((extra) => extra.value)],
      apply: (request) => {
        authorization.apply(request);
        for (const extra of extras) {
          placeValue(request, extra.in, extra.name, extra.value);
        }
      },
    };
  }

  private strategy(scheme: SecurityScheme): SecuritySchemeStrategy {
    switch (scheme) {
      case 'no_auth':
        return this.noAuth;
      case 'api_key':
        return this.apiKey;
      case 'http_basic':
        return this.httpBasic;
      case 'http_bearer':
        return this.httpBearer;
      case 'oauth2':
        return this.oauth2;
    }
  }

  private async runRest(
    appName: string,
    name: string,
    protocol: RestProtocol,
    input: Record<string, unknown>,
    authorization: Authorization,
    serverVariables: Record<string, string> | undefined,
  ): Promise<RunOutcome> {
    let request;
    try {
      request = protocol.openapi
        ? buildOpenApiRequest(withServerVariables(protocol as OpenApiProtocol, serverVariables), input)
        : buildRestRequest(protocol, input);
    } catch (error) {
      if (error instanceof InexpressibleInputError) {
        throw new FunctionInputInvalidError(name, [error.message]);
      }
      if (error instanceof ServerVariableError) {
        throw new ExecutionFailure(
          `Cannot build the request of ${name}: the app configuration's ${error.message}; change its server_variables`,
        );
      }
      if (error instanceof RequestBuildError) {
        throw new ExecutionFailure(`Cannot build the request of ${name}: ${error.message}`);
      }
      throw error;
    }
    authorization.apply(request);
    const serialized = serializeRequest(request);
    if (!this.metrics.enabled && !this.tracing.enabled) {
      return this.rest.execute(serialized);
    }
    return this.observedUpstream(appName, serialized);
  }

  /** The upstream exchange (retries included) as a client span and a latency by app and outcome. */
  private async observedUpstream(appName: string, request: SerializedRequest): Promise<RunOutcome> {
    const started = performance.now();
    const outcome = this.tracing.enabled
      ? await this.tracedUpstream(appName, request)
      : await this.rest.execute(request);
    const status = outcome.upstreamStatus;
    this.metrics.upstreamCall(
      appName,
      status === null ? 'failed' : `${Math.floor(status / 100)}xx`,
      (performance.now() - started) / 1000,
    );
    return outcome;
  }

  private tracedUpstream(appName: string, request: SerializedRequest): Promise<RunOutcome> {
    return this.tracing.span(
      `upstream ${request.method}`,
      {
        'http.request.method': request.method,
        'server.address': new URL(request.origin).host,
        'patchbay.app': appName,
      },
      async () => {
        // Inside the span: the upstream's work joins the trace as a child of this call.
        this.tracing.injectUpstream(request.headers);
        const answer = await this.rest.execute(request);
        if (answer.upstreamStatus !== null) {
          this.tracing.current()?.setAttribute('http.response.status_code', answer.upstreamStatus);
        }
        return answer;
      },
      SpanKind.CLIENT,
    );
  }

  private async runConnector(
    name: string,
    input: Record<string, unknown>,
    authorization: Authorization,
    target: ExecutionTarget,
  ): Promise<RunOutcome> {
    const connector = this.connectors.find(name);
    if (!connector) {
      throw new ExecutionFailure(
        `${name} is a connector function, but this Patchbay service has no connector registered for it`,
      );
    }
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(
          new ExecutionFailure(
            `Timeout: connector ${name} did not finish within ${this.config.EXECUTION_TIMEOUT_MS} ms`,
          ),
        );
      }, this.config.EXECUTION_TIMEOUT_MS);
    });
    try {
      const data = await Promise.race([
        this.invoke(connector, input, authorization, target, controller.signal),
        timeout,
      ]);
      return { success: true, data: data === undefined ? {} : data, error: null, upstreamStatus: null };
    } catch (error) {
      if (error instanceof ExecutionFailure) {
        throw error;
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw new ExecutionFailure(`Connector ${name} failed: ${reason}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs a connector so that a synchronous throw becomes a rejection like an asynchronous one. */
  private invoke(
    connector: Connector,
    input: Record<string, unknown>,
    authorization: Authorization,
    target: ExecutionTarget,
    signal: AbortSignal,
  ): Promise<unknown> {
    return Promise.resolve().then(() =>
      connector.run(input, {
        functionName: connector.functionName,
        linkedAccountOwnerId: target.account.row.linked_account_owner_id,
        credentials: authorization.credentials,
        signal,
      }),
    );
  }
}

/** Replaces every occurrence of a credential in a message that leaves the service. */
function scrub(message: string, secrets: string[]): string {
  let text = message;
  for (const secret of secrets) {
    if (secret.length >= MIN_SCRUBBED_SECRET && text.includes(secret)) {
      text = text.split(secret).join('[redacted]');
    }
  }
  return text;
}
