import { BadRequestError, ConflictError, NotFoundError } from '../../libs/common/src/index.js';

export class AppConfigurationNotFoundError extends NotFoundError {
  constructor(appName: string) {
    super(`App configuration for ${appName} not found in this project`);
  }
}

export class AppConfigurationExistsError extends ConflictError {
  constructor(appName: string) {
    super(`App configuration for ${appName} already exists in this project`);
  }
}

export class SecuritySchemeNotSupportedError extends BadRequestError {
  constructor(appName: string, scheme: string, supported: string[]) {
    const list = supported.length > 0 ? supported.join(', ') : 'none';
    super(`App ${appName} does not support security scheme ${scheme}; supported schemes: ${list}`);
  }
}

export class UnknownEnabledFunctionsError extends BadRequestError {
  constructor(appName: string, unknown: string[]) {
    super(`enabled_functions names functions that app ${appName} does not have: ${unknown.join(', ')}`);
  }
}
