import { BadRequestError, NotFoundError } from '../../libs/common/src/index.js';

export class McpServerNotFoundError extends NotFoundError {
  constructor(appName: string) {
    super(`App ${appName} is not a remote MCP server added with \`patchbay catalog add-mcp\``);
  }
}

/** The address or options given for a server cannot be used; the message says which and why. */
export class McpServerRefusedError extends BadRequestError {}
