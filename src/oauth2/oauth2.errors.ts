import { BadRequestError, DomainError } from '../../libs/common/src/index.js';

/** An OAuth 2.0 error code is a short token; anything else a provider sends is not echoed as one. */
const ERROR_CODE = /^[\w.-]{1,64}$/;

/**
 * A failed callback. `code` is the machine word appended as `error=` to the redirect URL, so that
 * the caller's page can react without parsing the message.
 */
export class OAuth2CallbackError extends BadRequestError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class OAuth2SchemeMissingError extends BadRequestError {
  constructor(appName: string) {
    super(`App ${appName} declares no oauth2 security scheme in the catalogue`);
  }
}

export class OAuth2ClientNotConfiguredError extends BadRequestError {
  constructor(appName: string, missing: string) {
    super(
      `App ${appName} has no OAuth 2.0 ${missing}: set security_scheme_overrides.oauth2.client_id and ` +
        `client_secret in the project's app configuration (PATCH /v1/app-configurations/${appName}), ` +
        `or give the catalogue's OAuth 2.0 client id and secret when importing the catalogue`,
    );
  }
}

export class OAuth2InsecureEndpointError extends BadRequestError {
  constructor(appName: string, field: string) {
    super(`App ${appName} has an OAuth 2.0 ${field} that is neither https nor http on a loopback address`);
  }
}

export class RedirectUrlNotAllowedError extends BadRequestError {
  constructor(field: string, origin: string, allowed: string[]) {
    super(
      `${field} has origin ${origin}, which is not allowed; allowed origins: ` +
        `${allowed.join(', ')} (add more in OAUTH2_REDIRECT_ALLOWED_ORIGINS)`,
    );
  }
}

export class OAuth2StateMissingError extends OAuth2CallbackError {
  constructor() {
    super('invalid_state', 'The OAuth 2.0 callback has no state parameter');
  }
}

export class OAuth2StateUnknownError extends OAuth2CallbackError {
  constructor() {
    super('invalid_state', 'Unknown or already used OAuth 2.0 state: start linking again');
  }
}

export class OAuth2StateExpiredError extends OAuth2CallbackError {
  constructor() {
    super('expired_state', 'The OAuth 2.0 linking flow expired (10 minutes): start linking again');
  }
}

export class OAuth2ProviderError extends OAuth2CallbackError {
  constructor(error: string, description: string | undefined) {
    super(
      ERROR_CODE.test(error) ? error : 'provider_error',
      `The OAuth 2.0 provider refused the authorization: ${error}${description ? ` (${description})` : ''}`,
    );
  }
}

export class OAuth2CodeMissingError extends OAuth2CallbackError {
  constructor() {
    super('missing_code', 'The OAuth 2.0 callback has neither a code nor an error');
  }
}

export class OAuth2ConfigurationChangedError extends OAuth2CallbackError {
  constructor(appName: string, what: string) {
    super('configuration_changed', `The app configuration for ${appName} ${what} during linking: start linking again`);
  }
}

export class OAuth2TokenRefusedError extends OAuth2CallbackError {
  constructor(error: string, description: string | undefined) {
    super(
      ERROR_CODE.test(error) ? error : 'token_error',
      `The OAuth 2.0 token endpoint refused the authorization code: ${error}${description ? ` (${description})` : ''}`,
    );
  }
}

/** The token endpoint could not be reached or gave no usable answer: the provider's fault, not the caller's. */
export class OAuth2TokenEndpointError extends DomainError {
  readonly status = 502;
  readonly code = 'token_endpoint_error';
}
