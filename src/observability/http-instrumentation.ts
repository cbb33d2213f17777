import { type Span, SpanStatusCode, context } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing.js';

/** Routes Fastify did not match: one label for all of them (a raw path would make the labels unbounded). */
const UNMATCHED = 'unmatched';

/**
 * Counts and times every request by its route template and status, and gives each one a server span that the
 * rest of the request runs in. Added only when metrics or traces are on, so that otherwise the request path
 * carries no hook at all.
 */
export function instrumentHttp(fastify: FastifyInstance, metrics: Metrics, tracing: Tracing): void {
  const spans = new WeakMap<object, Span>();
  if (tracing.enabled) {
    fastify.addHook('onRequest', (request, _reply, done) => {
      const started = tracing.startRequest(request.headers, request.method);
      if (!started) {
        done();
        return;
      }
      spans.set(request, started.span);
      // What runs after this hook (guard, pipe, handler) runs in the span's context.
      context.with(started.context, done);
    });
  }
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    const span = spans.get(request);
    if (span) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
    done();
  });
}
