import { BadRequestError, ConflictError, NotFoundError } from '../../libs/common/src/index.js';

export class McpServerNotFoundError extends NotFoundError {
  constructor(appName: string) {
    super(`App ${appName} is not a remote MCP server added with \`patchbay catalog add-mcp\``);
  }
}

/** A project's own server: another project's, or a catalogue app, is not found either (it is not visible to it). */
export class ProjectMcpServerNotFoundError extends NotFoundError {
  constructor(appName: string) {
    super(`App ${appName} is not a remote MCP server this project added`);
  }
}

/** The address or options given for a server cannot be used; the message says which and why. */
export class McpServerRefusedError extends BadRequestError {}

/** The app name is taken, by the catalogue or by a project's own app. */
export class McpServerNameTakenError extends ConflictError {
  constructor(appName: string) {
    super(`The app name ${appName} is taken; give another with app_name (--app-name)`);
  }
}
