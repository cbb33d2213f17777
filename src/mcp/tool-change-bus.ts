import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import type { McpCallContext } from './mcp-call-context.js';

/** Who a 2026-07-28 exchange serves, and how to end it (its HTTP response) from outside. */
export interface ExchangeScope {
  ctx: McpCallContext;
  end: () => void;
}

interface Listener {
  scope: ExchangeScope;
  deliver: (event: ServerEvent) => void;
}

/**
 * The change-event bus behind `subscriptions/listen` (protocol 2026-07-28), scoped by project.
 *
 * The SDK's listen router registers one listener per open stream while it serves that stream's
 * request and knows nothing of the caller; `publish` of its interface would reach every project's
 * streams. The transport runs each exchange inside `exchanges.run(scope, …)`, so a listener
 * subscribed during an exchange is filed under that exchange's caller, and `publishTo` reaches
 * only the streams whose tool list may have changed.
 */
export class ToolChangeBus implements ServerEventBus {
  readonly exchanges = new AsyncLocalStorage<ExchangeScope>();
  private readonly listeners = new Set<Listener>();

  /** Every open stream, whatever its project (the SDK's `notify` sugar). */
  publish(event: ServerEvent): void {
    this.publishTo(() => true, event);
  }

  /** The open streams whose caller `accepts`. */
  publishTo(accepts: (ctx: McpCallContext) => boolean, event: ServerEvent): void {
    for (const listener of [...this.listeners]) {
      if (accepts(listener.scope.ctx)) {
        listener.deliver(event);
      }
    }
  }

  subscribe(deliver: (event: ServerEvent) => void): () => void {
    const scope = this.exchanges.getStore();
    if (!scope) {
      // Only the transport opens streams, always inside an exchange; nothing to file this one under.
      return () => undefined;
    }
    const listener: Listener = { scope, deliver };
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The open streams (their callers and how to end them). */
  open(): ExchangeScope[] {
    return [...this.listeners].map((listener) => listener.scope);
  }
}
