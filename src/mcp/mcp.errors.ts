import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../libs/common/src/index.js';

export class McpTokenNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`MCP token ${id} not found in this project`);
  }
}

/** Neither a valid API key nor a valid, unrevoked, unexpired MCP token. */
export class McpCredentialsInvalidError extends UnauthorizedError {
  override readonly headers?: Readonly<Record<string, string>>;

  /** `challenge`: the WWW-Authenticate value, when the address has its own (a project's OAuth metadata). */
  constructor(
    readonly missing: boolean,
    challenge?: string,
  ) {
    super(
      missing
        ? 'Missing credentials: send the project API key in X-API-KEY, or an API key or MCP token as Authorization: Bearer'
        : 'Invalid credentials: the API key or MCP token is unknown, revoked or expired',
    );
    if (challenge) {
      this.headers = { 'www-authenticate': challenge };
    }
  }
}

export class McpOwnerOverrideError extends ForbiddenError {
  constructor() {
    super('This MCP token acts for one linked-account owner; a request cannot name another one');
  }
}

export class McpOriginNotAllowedError extends ForbiddenError {
  constructor(origin: string) {
    super(`Origin ${origin} may not call /v1/mcp; add it to MCP_ALLOWED_ORIGINS`);
  }
}

export class McpSessionNotFoundError extends NotFoundError {
  constructor() {
    super('Session not found: it ended or was never opened with these credentials; initialize again');
  }
}

/**
 * A tool's arguments do not fit its input schema. A tool execution error, not a protocol error (SEP-1303,
 * protocol 2025-11-25 and later): the model reads the message and can call again with better arguments.
 */
export class McpToolArgumentError extends BadRequestError {}
