import { SpanKind } from '@opentelemetry/api';
import pg from 'pg';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing.js';

/** SELECT, INSERT, WITH…: the statement's first word, the only part of it a span or a metric shows. */
function operation(text: unknown): string {
  const sql = typeof text === 'string' ? text : (text as { text?: unknown } | null)?.text;
  const word = typeof sql === 'string' ? /^\s*([A-Za-z]+)/.exec(sql)?.[1] : undefined;
  return word ? word.toUpperCase() : 'OTHER';
}

/**
 * The pg client class the pool makes its connections from (`extra.Client` of the TypeORM options), used only
 * when metrics or traces are on: each statement becomes a `db.query` span and a failed one is counted. A
 * subclass given to this app's pool, rather than a patch of pg's prototype, so that nothing else in the
 * process is touched. Statements given a callback (pg's own internals) pass through unchanged.
 */
export function instrumentedPgClient(metrics: Metrics, tracing: Tracing): typeof pg.Client {
  type AnyQuery = (...args: unknown[]) => unknown;
  class InstrumentedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // Replaced on the instance: pg's overloads of query() cannot be restated in an override.
      const query = super.query.bind(this) as AnyQuery;
      (this as unknown as { query: AnyQuery }).query = (...args: unknown[]) => {
        const last = args[args.length - 1];
        if (typeof last === 'function' || (typeof args[0] === 'object' && args[0] !== null && 'submit' in args[0])) {
          return query(...args);
        }
        const run = () =>
          (query(...args) as Promise<unknown>).catch((error: unknown) => {
            metrics.queryError();
            throw error;
          });
        return tracing.enabled
          ? tracing.span(
              'db.query',
              { 'db.system.name': 'postgresql', 'db.operation.name': operation(args[0]) },
              run,
              SpanKind.CLIENT,
            )
          : run();
      };
    }
  }
  return InstrumentedClient;
}
