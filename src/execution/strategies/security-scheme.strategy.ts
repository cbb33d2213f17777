import type { AccountView, ConfigurationView, FunctionView } from '../execution-cache.js';
import type { OutboundRequest } from '../rest-request.js';

/** Everything a strategy may need about one execution; the pre-checks have passed. */
export interface ExecutionTarget {
  projectId: string;
  function: FunctionView;
  configuration: ConfigurationView;
  account: AccountView;
}

/** What a strategy hands to the executors. */
export interface Authorization {
  /** The credentials a connector receives (never a refresh token). */
  credentials: Record<string, unknown>;
  /** Secret values to scrub from any error message before it leaves the service. */
  secrets: string[];
  /** Puts the credentials into a REST request where the app expects them. */
  apply(request: OutboundRequest): void;
}

/**
 * One implementation per security scheme, chosen by an exhaustive switch on the configured scheme.
 * `authorize` picks the credentials to use now (the account's own, else the app's default; for
 * OAuth 2.0 refreshed first when about to expire) and throws ExecutionFailure when there are none.
 */
export interface SecuritySchemeStrategy {
  authorize(target: ExecutionTarget): Promise<Authorization>;
}

/** `Bearer abc` from prefix `Bearer`; no prefix (absent, null or empty) leaves the value alone. */
export function withPrefix(prefix: string | null | undefined, value: string): string {
  return prefix ? `${prefix} ${value}` : value;
}
