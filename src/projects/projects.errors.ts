import { BadRequestError, NotFoundError, UnauthorizedError } from '../../libs/common/src/index.js';

export class ApiKeyMissingError extends UnauthorizedError {
  constructor() {
    super('Missing API key: send it in the X-API-KEY header');
  }
}

export class ApiKeyInvalidError extends UnauthorizedError {
  constructor() {
    super('Invalid API key: the X-API-KEY header does not match an active key');
  }
}

export class ProjectNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`Project ${id} not found`);
  }
}

export class ApiKeyNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`API key ${id} not found`);
  }
}

export class ApiKeyExpiryInPastError extends BadRequestError {
  constructor(expiresAt: Date) {
    super(`The expiry ${expiresAt.toISOString()} is not in the future`);
  }
}
