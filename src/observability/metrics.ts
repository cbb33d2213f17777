import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AppConfig } from '../config/app-config.js';

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
  private readonly http?: Histogram<'method' | 'route' | 'status'>;
  private readonly executions?: Counter<'app' | 'scheme' | 'outcome'>;
  private readonly upstream?: Histogram<'app' | 'outcome'>;
  private readonly refreshes?: Counter<'outcome'>;
  private readonly searches?: Histogram<'kind'>;
  private readonly rateLimits?: Counter<'budget' | 'decision'>;
  private readonly queryErrors?: Counter;
  private readonly mcp?: Counter<'method'>;

  constructor(config: AppConfig) {
    this.enabled = config.METRICS_PORT !== undefined;
    if (!this.enabled) {
      return;
    }
    const registers = [this.registry];
    this.http = new Histogram({
      name: 'patchbay_http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status, with their latency',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.executions = new Counter({
      name: 'patchbay_executions_total',
      help: 'Function executions that ran (pre-checks passed), by app, security scheme and outcome',
      labelNames: ['app', 'scheme', 'outcome'],
      registers,
    });
    this.upstream = new Histogram({
      name: 'patchbay_upstream_request_duration_seconds',
      help: 'Calls to upstream APIs (each attempt), by app and outcome (the status class, or the failure kind)',
      labelNames: ['app', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.refreshes = new Counter({
      name: 'patchbay_oauth2_token_refreshes_total',
      help: 'OAuth 2.0 token refreshes, by outcome (refreshed, failed)',
      labelNames: ['outcome'],
      registers,
    });
    this.searches = new Histogram({
      name: 'patchbay_search_duration_seconds',
      help: 'Searches by intent, by kind (apps, functions)',
      labelNames: ['kind'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.rateLimits = new Counter({
      name: 'patchbay_rate_limit_decisions_total',
      help: 'Rate-limit decisions, by budget (request, owner, auth_failure) and decision (granted, refused)',
      labelNames: ['budget', 'decision'],
      registers,
    });
    this.queryErrors = new Counter({
      name: 'patchbay_database_query_errors_total',
      help: 'Database statements that failed',
      registers,
    });
    this.mcp = new Counter({
      name: 'patchbay_mcp_requests_total',
      help: 'JSON-RPC messages received on /v1/mcp, by method (other for methods outside the protocol)',
      labelNames: ['method'],
      registers,
    });
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
    this.http?.labels(method, route, String(status)).observe(seconds);
  }

  execution(app: string, scheme: string, success: boolean): void {
    this.executions?.labels(app, scheme, success ? 'success' : 'failure').inc();
  }

  upstreamCall(app: string, outcome: string, seconds: number): void {
    this.upstream?.labels(app, outcome).observe(seconds);
  }

  tokenRefresh(refreshed: boolean): void {
    this.refreshes?.labels(refreshed ? 'refreshed' : 'failed').inc();
  }

  search(kind: 'apps' | 'functions', seconds: number): void {
    this.searches?.labels(kind).observe(seconds);
  }

  rateLimit(budget: RateLimitBudget, granted: boolean): void {
    this.rateLimits?.labels(budget, granted ? 'granted' : 'refused').inc();
  }

  queryError(): void {
    this.queryErrors?.inc();
  }

  mcpRequest(method: string): void {
    this.mcp?.labels(MCP_METHODS.has(method) ? method : 'other').inc();
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
