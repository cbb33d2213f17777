import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { MetricsEndpoint } from '../../../src/observability/metrics-endpoint.js';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { json, Upstream } from '../execution/upstream.js';

const SECRET = 'upstream-secret-key-4242';
/** The latency histograms' buckets in seconds, as docs/operations.md lists them. */
const LATENCY_BUCKET_BOUNDS = [
  '0.001',
  '0.0025',
  '0.005',
  '0.01',
  '0.025',
  '0.05',
  '0.1',
  '0.25',
  '0.5',
  '1',
  '2.5',
  '5',
  '10',
  '30',
];
const OWNER_INPUT = 'needle-in-the-input';

const fn = (upstream: Upstream) =>
  ({
    protocol: 'rest',
    description: 'Send a postcard to a friend',
    protocol_data: { method: 'GET', path: '/thing', server_url: upstream.url },
    parameters: {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          properties: { q: { type: 'string' } },
          required: [],
          visible: ['q'],
          additionalProperties: false,
        },
      },
      required: [],
      visible: ['query'],
      additionalProperties: false,
    },
  }) as Partial<FunctionEntity>;

async function scenario(app: TestApp, upstream: Upstream): Promise<Scenario> {
  const { projectId } = await app.ctx.newProject();
  return executionScenario(app, {
    projectId,
    scheme: 'api_key',
    settings: { location: 'header', name: 'X-Key' },
    credentials: { api_key: SECRET },
    function: fn(upstream),
  });
}

describe('Prometheus metrics on a port of their own', () => {
  let app: TestApp;
  let upstream: Upstream;
  let run: Scenario;
  let metricsUrl: string;

  beforeAll(async () => {
    app = await TestApp.start({ METRICS_PORT: '0', METRICS_TOKEN: 'scrape-token', RATE_LIMIT_REQUESTS: '100' });
    upstream = await Upstream.start();
    run = await scenario(app, upstream);
    metricsUrl = `http://127.0.0.1:${app.app.get(MetricsEndpoint).port}/metrics`;
  });

  afterAll(async () => {
    await upstream?.close();
    await app?.close();
  });

  it('asks for the token', async () => {
    expect((await fetch(metricsUrl)).status).toBe(401);
    expect((await fetch(metricsUrl, { headers: { authorization: 'Bearer wrong-token!' } })).status).toBe(401);
  });

  it('counts requests by route template, executions, upstream calls, searches, limits, the pool, the log and MCP', async () => {
    expect((await run.execute({ query: { q: OWNER_INPUT } })).body.success).toBe(true);
    expect((await app.get('/v1/functions/search', { query: { intent: 'send a postcard' } })).status).toBe(200);
    expect((await app.get(`/v1/no-such-route/${OWNER_INPUT}`)).status).toBe(404);
    const ping = await app.post(
      '/v1/mcp',
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { headers: { accept: 'application/json, text/event-stream' } },
    );
    expect(ping.status).toBe(200);

    const scraped = await fetch(metricsUrl, { headers: { authorization: 'Bearer scrape-token' } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toContain('text/plain');
    const text = await scraped.text();
    const sample = (line: RegExp) => expect(text).toMatch(line);
    sample(
      /patchbay_http_request_duration_seconds_count\{method="POST",route="\/v1\/functions\/:function_name\/execute",status="200"\} 1/,
    );
    sample(/patchbay_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} 1/);
    // A histogram as Prometheus reads one: its type, cumulative buckets ending at +Inf, a sum and a count.
    sample(/# TYPE patchbay_http_request_duration_seconds histogram/);
    const executeBuckets = [
      ...text.matchAll(
        /patchbay_http_request_duration_seconds_bucket\{method="POST",route="\/v1\/functions\/:function_name\/execute",status="200",le="([^"]+)"\} (\d+)/g,
      ),
    ].map(([, le, count]) => [le, Number(count)] as const);
    expect(executeBuckets.map(([le]) => le)).toEqual([...LATENCY_BUCKET_BOUNDS, '+Inf']);
    const counts = executeBuckets.map(([, count]) => count);
    expect(counts).toEqual([...counts].sort((x, y) => x - y));
    expect(counts.at(-1)).toBe(1);
    sample(
      /patchbay_http_request_duration_seconds_sum\{method="POST",route="\/v1\/functions\/:function_name\/execute",status="200"\} \d+\.\d+/,
    );
    sample(new RegExp(`patchbay_executions_total\\{app="${run.app.name}",scheme="api_key",outcome="success"\\} 1`));
    sample(new RegExp(`patchbay_upstream_request_duration_seconds_count\\{app="${run.app.name}",outcome="2xx"\\} 1`));
    sample(/patchbay_search_duration_seconds_count\{kind="functions"\} 1/);
    sample(/patchbay_rate_limit_decisions_total\{budget="request",decision="granted"\} [1-9]/);
    sample(/patchbay_database_pool_connections [1-9]/);
    sample(/patchbay_database_pool_waiting_requests 0/);
    sample(/patchbay_execution_log_buffered_rows \d+/);
    sample(/patchbay_database_query_errors_total 0/);
    sample(/patchbay_mcp_requests_total\{method="ping"\} 1/);
    // Bounded labels: no owner id, no input, no raw path.
    expect(text).not.toContain(run.owner);
    expect(text).not.toContain(OWNER_INPUT);
    expect(text).not.toContain(SECRET);
  });

  it('counts failed statements, and token refreshes by outcome', async () => {
    const scrape = async () => (await fetch(metricsUrl, { headers: { authorization: 'Bearer scrape-token' } })).text();
    const errors = () =>
      scrape().then((text) => Number(/^patchbay_database_query_errors_total (\d+)$/m.exec(text)?.[1]));
    const before = await errors();
    // A statement the server refuses, through the service's own pool.
    await expect(app.dataSource.query('SELECT no_such_column FROM audit_events')).rejects.toThrow(/no_such_column/);
    expect(await errors()).toBe(before + 1);

    const provider = await Upstream.start();
    try {
      const expiring = (refreshToken: string) =>
        executionScenario(app, {
          projectId: run.projectId,
          scheme: 'oauth2',
          settings: {
            location: 'header',
            name: 'Authorization',
            prefix: 'Bearer',
            client_id: 'app-client',
            authorize_url: `${provider.url}/authorize`,
            access_token_url: `${provider.url}/token`,
            refresh_token_url: `${provider.url}/refresh`,
          },
          appSecrets: { oauth2_client_secret: 'app-secret' },
          credentials: {
            access_token: 'at-old',
            refresh_token: refreshToken,
            expires_at: Math.floor(Date.now() / 1000) - 60,
          },
          function: fn(upstream),
        });
      provider.respond((request, response) => {
        const refused = new URLSearchParams(request.body).get('refresh_token') === 'rt-refused';
        json(
          response,
          refused ? 400 : 200,
          refused
            ? { error: 'invalid_grant' }
            : { access_token: 'at-new', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-new' },
        );
      });
      expect((await (await expiring('rt-good')).execute()).body.success).toBe(true);
      expect((await (await expiring('rt-refused')).execute()).body.success).toBe(false);
    } finally {
      await provider.close();
    }
    const text = await scrape();
    expect(text).toMatch(/^patchbay_oauth2_token_refreshes_total\{outcome="refreshed"\} 1$/m);
    expect(text).toMatch(/^patchbay_oauth2_token_refreshes_total\{outcome="failed"\} 1$/m);
  });
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

/** A tiny OTLP/HTTP receiver: decodes each JSON export and keeps its spans. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly resources: unknown[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
        };
        for (const resourceSpans of body.resourceSpans) {
          receiver.resources.push(resourceSpans.resource);
          for (const scope of resourceSpans.scopeSpans) {
            receiver.spans.push(...scope.spans);
          }
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  async until(predicate: () => boolean): Promise<void> {
    for (let i = 0; i < 100 && !predicate(); i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

describe('OpenTelemetry traces exported over OTLP/HTTP', () => {
  let app: TestApp;
  let upstream: Upstream;
  let receiver: OtlpReceiver;
  let run: Scenario;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    app = await TestApp.start({
      TRACING_OTLP_ENDPOINT: receiver.url,
      TRACING_PROPAGATE_UPSTREAM: 'true',
      TRACING_EXPORT_DELAY_MS: '50',
    });
    upstream = await Upstream.start();
    run = await scenario(app, upstream);
  });

  afterAll(async () => {
    await upstream?.close();
    await app?.close();
    await receiver?.close();
  });

  it('gives an execution a server span, with the pipeline, the upstream call and statements as children', async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    const result = await app.post(
      `/v1/functions/${run.fn.name}/execute`,
      { function_input: { query: { q: OWNER_INPUT } }, linked_account_owner_id: run.owner },
      { headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` } },
    );
    expect(result.body.success).toBe(true);

    const isUpstream = (span: OtlpSpan) => span.name === 'upstream GET' && span.traceId === callerTrace;
    await receiver.until(
      () => receiver.spans.some(isUpstream) && receiver.spans.some((s) => s.name.startsWith('POST')),
    );
    const trace = receiver.spans.filter((span) => span.traceId === callerTrace);
    const server = trace.find((span) => span.name === 'POST /v1/functions/:function_name/execute');
    expect(server?.parentSpanId).toBe(callerSpan);
    expect(attribute(server as OtlpSpan, 'http.response.status_code')).toBe(200);
    const execution = trace.find((span) => span.name === 'execution');
    expect(execution?.parentSpanId).toBe(server?.spanId);
    expect(attribute(execution as OtlpSpan, 'patchbay.app')).toBe(run.app.name);
    const call = trace.find(isUpstream) as OtlpSpan;
    expect(call.parentSpanId).toBe(execution?.spanId);
    expect(attribute(call, 'http.response.status_code')).toBe(200);
    expect(trace.some((span) => span.name === 'db.query')).toBe(true);

    // The upstream got the trace: its span is the call's.
    expect(upstream.received.at(-1)?.headers.traceparent).toBe(`00-${callerTrace}-${call.spanId}-01`);

    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain(SECRET);
    expect(exported).not.toContain(OWNER_INPUT);
    expect(exported).not.toContain(run.owner);
    expect(exported).not.toContain(app.ctx.defaultApiKey as string);
    expect(JSON.stringify(receiver.resources)).toContain('patchbay');
  });

  it('gives a search its own span under the request, without the intent', async () => {
    expect((await app.get('/v1/functions/search', { query: { intent: 'send a postcard' } })).status).toBe(200);
    await receiver.until(() => receiver.spans.some((span) => span.name === 'search functions'));
    const search = receiver.spans.find((span) => span.name === 'search functions') as OtlpSpan;
    const parent = receiver.spans.find((span) => span.spanId === search.parentSpanId);
    expect(parent?.name).toBe('GET /v1/functions/search');
    expect(JSON.stringify(receiver.spans)).not.toContain('postcard');
  });
});

describe('Traces sampled by TRACING_SAMPLE_RATIO', () => {
  let app: TestApp;
  let receiver: OtlpReceiver;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    app = await TestApp.start({
      TRACING_OTLP_ENDPOINT: receiver.url,
      TRACING_EXPORT_DELAY_MS: '50',
      TRACING_SAMPLE_RATIO: '0',
    });
    await app.ctx.newProject();
  });

  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  it("traces none of the service's own requests at 0, and follows a caller's sampled flag", async () => {
    const sampledTrace = '0af7651916cd43dd8448eb211c80319c';
    const unsampledTrace = '5ce0e9a56015fec5aadfa328ae398115';
    expect((await app.get('/v1/functions/search', { query: { intent: 'no caller trace' } })).status).toBe(200);
    const search = (traceparent: string) =>
      app.get('/v1/functions/search', { query: { intent: 'a caller trace' }, headers: { traceparent } });
    expect((await search(`00-${unsampledTrace}-b7ad6b7169203331-00`)).status).toBe(200);
    expect((await search(`00-${sampledTrace}-b7ad6b7169203331-01`)).status).toBe(200);

    // Exported in order: once the sampled request's spans are in, the others' would be too.
    await receiver.until(() => receiver.spans.some((span) => span.traceId === sampledTrace));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const requests = receiver.spans.filter((span) => span.name === 'GET /v1/functions/search');
    expect(requests.map((span) => span.traceId)).toEqual([sampledTrace]);
  });
});
