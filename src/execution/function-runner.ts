import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import type { SecurityScheme } from '../apps/security-scheme.js';
import { AppConfig } from '../config/app-config.js';
import type { McpProtocolData } from '../functions/function.entity.js';
import { ServerVariableError } from '../functions/openapi-wire.js';
import { Metrics } from '../observability/metrics.js';
import { Tracing } from '../observability/tracing.js';
import type { Connector } from './connectors/connector.js';
import { ConnectorRegistry } from './connectors/connector-registry.js';
import { ExecutionFailure, FunctionInputInvalidError, type RunOutcome } from './execution.errors.js';
import { McpExecutor } from './mcp-executor.js';
import { buildOpenApiRequest, type OpenApiProtocol, withServerVariables } from './openapi-request.js';
import { InexpressibleInputError } from './parameter-styles.js';
import {
  buildRestRequest,
  placeValue,
  RequestBuildError,
  type RestProtocol,
  type SerializedRequest,
  serializeRequest,
} from './rest-request.js';
import { RestExecutor } from './rest-executor.js';
import { extraCredentials } from './security-requirements.js';
import { StoredSecrets } from './stored-secrets.js';
import { ApiKeySchemeStrategy } from './strategies/api-key.strategy.js';
import { HttpBasicSchemeStrategy } from './strategies/http-basic.strategy.js';
import { HttpBearerSchemeStrategy } from './strategies/http-bearer.strategy.js';
import { NoAuthSchemeStrategy } from './strategies/no-auth.strategy.js';
import { OAuth2SchemeStrategy } from './strategies/oauth2.strategy.js';
import type { Authorization, ExecutionTarget, SecuritySchemeStrategy } from './strategies/security-scheme.strategy.js';

/** Secrets shorter than this are not scrubbed from messages: they would match ordinary text. */
const MIN_SCRUBBED_SECRET = 4;

/**
 * Runs a function whose pre-checks passed: the configured scheme's strategy authorizes it (with the extra
 * credentials a combined requirement needs), then its protocol's executor calls the upstream (REST, observed
 * by metrics and traces when they are on), a registered connector (under the execution timeout) or a remote
 * MCP server. The rules around a run (pre-checks, budgets, the execution log) are ExecutionService's.
 */
@Injectable()
export class FunctionRunner {
  constructor(
    private readonly rest: RestExecutor,
    private readonly mcp: McpExecutor,
    private readonly connectors: ConnectorRegistry,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
    private readonly tracing: Tracing,
    private readonly noAuth: NoAuthSchemeStrategy,
    private readonly apiKey: ApiKeySchemeStrategy,
    private readonly httpBasic: HttpBasicSchemeStrategy,
    private readonly httpBearer: HttpBearerSchemeStrategy,
    private readonly oauth2: OAuth2SchemeStrategy,
    private readonly secrets: StoredSecrets,
  ) {}

  /** Authorizes with the configured scheme's strategy and runs the function's protocol; credentials never reach the error. */
  async run(target: ExecutionTarget, input: Record<string, unknown>): Promise<RunOutcome> {
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
          outcome = await this.mcp.execute(fn.protocol_data as McpProtocolData, input, authorization, fn.app_name);
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
