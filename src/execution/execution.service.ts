import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { parseDateTime } from '../../libs/common/src/index.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import { enablesFunction } from '../catalog-rules/runnable.js';
import { FunctionNotFoundError } from '../functions/functions.errors.js';
import { Metrics } from '../observability/metrics.js';
import { Tracing } from '../observability/tracing.js';
import { type RateLimitHeaders, RateLimitsService } from '../rate-limits/rate-limits.service.js';
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
  FunctionNotEnabledError,
  LinkedAccountDisabledError,
  LinkedAccountOfOwnerNotFoundError,
  LinkedAccountSchemeMismatchError,
  type RunOutcome,
  SchemeNotOfferedError,
} from './execution.errors.js';
import { ExecutionRepository } from './execution.repository.js';
import { FunctionInputs } from './function-input.js';
import { FunctionRunner } from './function-runner.js';
import type { ExecutionTarget } from './strategies/security-scheme.strategy.js';

/** Who called, for the execution log (REST when not given). */
export interface ExecutionOrigin {
  source: ExecutionSource;
  mcpTokenId?: string | null;
  /** Told the owner's budget when one applies and granted the execution (for the answer's `RateLimit-*` fields). */
  onBudget?: (headers: RateLimitHeaders) => void;
}

/** Longest error text kept in the execution log. */
const MAX_LOGGED_ERROR = 2000;

/**
 * Runs a catalogue function for a linked-account owner: the pre-checks (each an HTTP error), the
 * owner's budget, then the shared pipeline (validate, fill invisible defaults, drop nulls), then the
 * run itself (FunctionRunner: the scheme's strategy and the protocol's executor). Every run is recorded
 * in the execution log.
 */
@Injectable()
export class ExecutionService {
  constructor(
    private readonly cache: ExecutionCache,
    private readonly inputs: FunctionInputs,
    private readonly runner: FunctionRunner,
    private readonly log: ExecutionLogWriter,
    private readonly repository: ExecutionRepository,
    private readonly limits: RateLimitsService,
    private readonly metrics: Metrics,
    private readonly tracing: Tracing,
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
      outcome = await this.runner.run(target, input);
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
    const fnView = await this.cache.function(functionName, projectId);
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
}
