import { BadRequestError, ForbiddenError, NotFoundError } from '../../libs/common/src/index.js';

/** The pre-checks of an execution: each one is an HTTP error, never a `success:false` result. */
export class AppConfigurationDisabledError extends ForbiddenError {
  constructor(appName: string) {
    super(`App configuration for ${appName} is disabled in this project`);
  }
}

export class FunctionNotEnabledError extends ForbiddenError {
  constructor(functionName: string, appName: string) {
    super(`Function ${functionName} is not enabled in this project's configuration of app ${appName}`);
  }
}

export class LinkedAccountOfOwnerNotFoundError extends NotFoundError {
  constructor(appName: string, ownerId: string) {
    super(`No linked account of app ${appName} for owner ${ownerId} in this project`);
  }
}

export class LinkedAccountDisabledError extends ForbiddenError {
  constructor(appName: string, ownerId: string) {
    super(`The linked account of app ${appName} for owner ${ownerId} is disabled`);
  }
}

export class LinkedAccountSchemeMismatchError extends BadRequestError {
  constructor(appName: string, ownerId: string, linked: string, configured: string) {
    super(
      `The linked account of app ${appName} for owner ${ownerId} was linked with security scheme ${linked}, ` +
        `but the app configuration now uses ${configured}; re-link the account with ${configured}`,
    );
  }
}

export class SchemeNotOfferedError extends BadRequestError {
  constructor(appName: string, scheme: string) {
    super(
      `App ${appName} no longer offers security scheme ${scheme}; update the app configuration and re-link the account`,
    );
  }
}

export class FunctionInputInvalidError extends BadRequestError {
  constructor(
    functionName: string,
    readonly violations: string[],
  ) {
    super(`Invalid function_input for ${functionName}: ${violations.join('; ')}`);
  }
}

/** What one run produced, before it becomes the response and a log row. */
export interface RunOutcome {
  success: boolean;
  data: unknown;
  error: string | null;
  /** Status of the last upstream answer, when there was one. */
  upstreamStatus: number | null;
}

/**
 * A run that cannot go on (missing credentials, a refused refresh, a connector error): it becomes
 * `success:false` with this message, which must name the cause and never carry a secret.
 */
export class ExecutionFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExecutionFailure';
  }
}
