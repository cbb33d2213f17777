import { BadRequestError, NotFoundError } from '../../libs/common/src/index.js';

export class IdentityProviderNotFoundError extends NotFoundError {
  constructor() {
    super('This project has no identity provider for MCP sign-in; set one with PUT /v1/mcp/identity-provider');
  }
}

export class IdentityProviderInvalidError extends BadRequestError {
  constructor(reason: string) {
    super(`Invalid identity provider: ${reason}`);
  }
}
