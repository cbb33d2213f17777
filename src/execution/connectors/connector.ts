/** What a connector receives besides its input. */
export interface ConnectorContext {
  functionName: string;
  linkedAccountOwnerId: string;
  /**
   * The linked account's credentials for the configured scheme, ready to use: `{}` (no_auth),
   * `{api_key}`, `{username, password}`, `{token}` or `{access_token, token_type?, scope?, expires_at?}`
   * (OAuth 2.0, already refreshed when it was about to expire).
   */
  credentials: Record<string, unknown>;
  /** Aborted when the execution times out (EXECUTION_TIMEOUT_MS); pass it to any outbound call. */
  signal: AbortSignal;
}

/**
 * An in-process implementation of a catalogue function whose `protocol` is `connector`. It gets the
 * validated input (invisible defaults filled, nulls dropped) and returns the result's `data`;
 * whatever it throws becomes `success:false` with the error's message.
 */
export interface Connector {
  /** The catalogue function it implements, e.g. `PATCHBAY_UTILS__FORMAT_DATETIME`. */
  readonly functionName: string;
  run(input: Record<string, unknown>, context: ConnectorContext): unknown;
}

/** A failure whose message is meant for the caller (bad input the schema could not express). */
export class ConnectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectorError';
  }
}
