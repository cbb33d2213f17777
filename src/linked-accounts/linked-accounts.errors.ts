import { BadRequestError, ConflictError, NotFoundError } from '../../libs/common/src/index.js';

export class LinkedAccountNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`Linked account ${id} not found`);
  }
}

export class LinkedAccountExistsError extends ConflictError {
  constructor(appName: string, ownerId: string) {
    super(`A linked account of app ${appName} for owner ${ownerId} already exists in this project`);
  }
}

export class SecuritySchemeMismatchError extends BadRequestError {
  constructor(appName: string, configured: string, requested: string) {
    super(
      `App configuration for ${appName} uses security scheme ${configured}; ` +
        `cannot link an account with security scheme ${requested}`,
    );
  }
}
