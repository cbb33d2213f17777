import { Injectable } from '@nestjs/common';
import { Gauge, Registry } from 'prom-client';
import { AppConfig } from '../config/app-config.js';
import { FastCounter, FastHistogram } from './series.js';

/** Seconds: from a cached execution (about 1 ms) to a slow upstream (the 30 s execution timeout). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Outcome of one rate-limit decision, by budget. */
export type RateLimitBudget = 'request' | 'owner' | 'auth_failure';

/**
 * Prometheus metrics (prom-client), exposed by MetricsEndpoint when METRICS_PORT is set. Off by default: then
 * no instrument exists, and each recording method returns at its first line, so a caller pays one call and one
 * branch (no allocation). Labels are bounded: route templates (never raw paths), app names of the catalogue,
 * security schemes, outcomes and JSON-RPC methods of a fixed list; never owner ids, keys or inputs.
 *
 * One registry per instance of the app (not prom-client's global one), so that several apps in one process
 * (tests start instances side by side) each count their own.
 */
@Injectable()
export class Metrics {
  readonly enabled: boolean;
  readonly registry = new Registry();
  private readonly http?: FastHistogram;
  private readonly executions?: FastCounter;
  private readonly upstream?: FastHistogram;
  private readonly refreshes?: FastCounter;
  private readonly searches?: FastHistogram;
  private readonly rateLimits?: FastCounter;
  private readonly queryErrors?: FastCounter;
  private readonly mcp?: FastCounter;

  constructor(config: AppConfig) {
    this.enabled = config.METRICS_PORT !== undefined;
    if (!this.enabled) {
      return;
    }
    this.http = new FastHistogram(
      'patchbay_http_request_duration_seconds',
      'HTTP requests by method, route template and status, with their latency',
      ['method', 'route', 'status'],
      LATENCY_BUCKETS,
      this.registry,
    );
    this.executions = new FastCounter(
      'patchbay_executions_total',
      'Function executions that ran (pre-checks passed), by app, security scheme and outcome',
      ['app', 'scheme', 'outcome'],
      this.registry,
    );
    this.upstream = new FastHistogram(
      'patchbay_upstream_request_duration_seconds',
      'Calls to upstream APIs (each attempt), by app and outcome (the status class, or the failure kind)',
      ['app', 'outcome'],
      LATENCY_BUCKETS,
      this.registry,
    );
    this.refreshes = new FastCounter(
      'patchbay_oauth2_token_refreshes_total',
      'OAuth 2.0 token refreshes, by outcome (refreshed, failed)',
      ['outcome'],
      this.registry,
    );
    this.searches = new FastHistogram(
      'patchbay_search_duration_seconds',
      'Searches by intent, by kind (apps, functions)',
      ['kind'],
      LATENCY_BUCKETS,
      this.registry,
    );
    this.rateLimits = new FastCounter(
      'patchbay_rate_limit_decisions_total',
      'Rate-limit decisions, by budget (request, owner, auth_failure) and decision (granted, refused)',
      ['budget', 'decision'],
      this.registry,
    );
    this.queryErrors = new FastCounter(
      'patchbay_database_query_errors_total',
      'Database statements that failed',
      [],
      this.registry,
    );
    this.mcp = new FastCounter(
      'patchbay_mcp_requests_total',
      'JSON-RPC messages received on /v1/mcp, by method (other for methods outside the protocol)',
      ['method'],
      this.registry,
    );
  }

  /**
   * A gauge read when scraped (database pool, execution-log buffer). `read` returns the value; `labels`, when
   * given, the values by label.
   */
  gauge(name: string, help: string, read: () => number): void {
    if (!this.enabled) {
      return;
    }
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.http?.observe(seconds, method, route, String(status));
  }

  execution(app: string, scheme: string, success: boolean): void {
    this.executions?.inc(app, scheme, success ? 'success' : 'failure');
  }

  upstreamCall(app: string, outcome: string, seconds: number): void {
    this.upstream?.observe(seconds, app, outcome);
  }

  tokenRefresh(refreshed: boolean): void {
    this.refreshes?.inc(refreshed ? 'refreshed' : 'failed');
  }

  search(kind: 'apps' | 'functions', seconds: number): void {
    this.searches?.observe(seconds, kind);
  }

  rateLimit(budget: RateLimitBudget, granted: boolean): void {
    this.rateLimits?.inc(budget, granted ? 'granted' : 'refused');
  }

  queryError(): void {
    this.queryErrors?.inc();
  }

  mcpRequest(method: string): void {
    this.mcp?.inc(MCP_METHODS.has(method) ? method : 'other');
  }
}

/** JSON-RPC methods of the MCP protocol: the label's whole range. */
const MCP_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
  'server/discover',
  'response',
]);
