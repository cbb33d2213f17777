import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { AppConfig } from '../config/app-config.js';

/** How the `traceparent` of a request, or of an upstream call, is read and written. */
const W3C = new W3CTraceContextPropagator();

const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
  },
};

const headerSetter = {
  set: (carrier: Record<string, string>, key: string, value: string) => {
    carrier[key] = value;
  },
};

/**
 * OpenTelemetry traces, exported over OTLP/HTTP (JSON) to TRACING_OTLP_ENDPOINT; off when it is unset, and then
 * every method runs its callback and nothing else (no span, no context switch).
 *
 * The official SDK, taken piecemeal rather than as @opentelemetry/sdk-node (which brings every exporter and the
 * instrumentation loader: 50 MB and more): the API, the base tracer provider, the batch processor, the OTLP/HTTP
 * exporter and the AsyncLocalStorage context manager, about 25 MB in all. Spans are made by hand where the
 * service does its work (request, search, execution pipeline, upstream call, database statement), with
 * attributes that never hold secrets or inputs: route templates, app and function names, statuses, the kind of
 * a statement (SELECT, INSERT…), never its parameters, the owner id or a URL's query.
 *
 * The provider belongs to this app (several apps in one process each export their own); the context manager
 * is the process's (OpenTelemetry has one slot for it), installed by the first app that traces.
 */
@Injectable()
export class Tracing implements OnModuleDestroy {
  readonly enabled: boolean;
  /** Whether upstream calls carry the current `traceparent` (TRACING_PROPAGATE_UPSTREAM). */
  readonly propagateUpstream: boolean;
  private readonly provider?: BasicTracerProvider;
  private readonly tracer?: Tracer;

  constructor(config: AppConfig) {
    this.enabled = config.TRACING_OTLP_ENDPOINT !== undefined;
    this.propagateUpstream = this.enabled && config.TRACING_PROPAGATE_UPSTREAM;
    if (!this.enabled) {
      return;
    }
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': config.TRACING_SERVICE_NAME }),
      // TRACING_SAMPLE_RATIO of the traces this service starts; a caller's traceparent decides for its own.
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.TRACING_SAMPLE_RATIO) }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url: config.TRACING_OTLP_ENDPOINT }), {
          scheduledDelayMillis: config.TRACING_EXPORT_DELAY_MS,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('patchbay');
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }

  /** Sends the spans still buffered; the app's shutdown waits for it. */
  async onModuleDestroy(): Promise<void> {
    await this.provider?.shutdown();
  }

  /** A request's server span, a child of the caller's `traceparent` when it sent one; and its context. */
  startRequest(headers: Record<string, unknown>, method: string): { span: Span; context: Context } | undefined {
    if (!this.tracer) {
      return undefined;
    }
    const parent = W3C.extract(context.active(), headers, headerGetter);
    const span = this.tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
      parent,
    );
    return { span, context: trace.setSpan(parent, span) };
  }

  /** Runs `work` in a child span of the current one; the span records an exception's type, never its message. */
  async span<T>(name: string, attributes: Attributes, work: () => Promise<T>, kind = SpanKind.INTERNAL): Promise<T> {
    if (!this.tracer) {
      return work();
    }
    return this.tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
      try {
        return await work();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', error instanceof Error ? error.constructor.name : 'unknown');
        throw error;
      } finally {
        span.end();
      }
    });
  }

  /** The current span (to add attributes learnt on the way), when tracing. */
  current(): Span | undefined {
    return this.tracer ? trace.getActiveSpan() : undefined;
  }

  /** Adds the current `traceparent` (and `tracestate`) to an upstream request's headers when configured. */
  injectUpstream(headers: Record<string, string>): void {
    if (this.propagateUpstream) {
      W3C.inject(context.active(), headers, headerSetter);
    }
  }
}
