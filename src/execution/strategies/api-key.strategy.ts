import { Injectable } from '@nestjs/common';
import { ExecutionFailure } from '../execution.errors.js';
import { placeValue } from '../rest-request.js';
import { StoredSecrets } from '../stored-secrets.js';
import {
  type Authorization,
  type ExecutionTarget,
  type SecuritySchemeStrategy,
  withPrefix,
} from './security-scheme.strategy.js';

/** `api_key`: the key at the scheme's location (header, query, cookie or body) under its name, with its prefix. */
@Injectable()
export class ApiKeySchemeStrategy implements SecuritySchemeStrategy {
  constructor(private readonly secrets: StoredSecrets) {}

  authorize(target: ExecutionTarget): Promise<Authorization> {
    const app = target.function.fn.app;
    const settings = app.security_schemes.api_key;
    if (!settings) {
      throw new ExecutionFailure(`App ${app.name} does not offer the api_key scheme`);
    }
    const own = this.secrets.account(target.account, 'api_key');
    const key = own.api_key || this.secrets.appDefaults(target.function).api_key?.secret_key;
    if (!key) {
      throw new ExecutionFailure(
        `No API key to send: the linked account has none and app ${app.name} has no default API key`,
      );
    }
    const value = withPrefix(settings.prefix, key);
    return Promise.resolve({
      credentials: { api_key: key },
      secrets: [key],
      apply: (request) => placeValue(request, settings.location, settings.name, value),
    });
  }
}
