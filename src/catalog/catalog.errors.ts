import { ConflictError } from '../../libs/common/src/index.js';

/** The catalogue writes no app that a project added as its own (through /v1/mcp-servers): it is that project's. */
export class AppOwnedByProjectError extends ConflictError {
  constructor(appName: string) {
    super(
      `App ${appName} is a project's own app (added through /v1/mcp-servers); the catalogue cannot write it: import it under another name`,
    );
  }
}
