import { Injectable } from '@nestjs/common';
import { ExecutionFailure } from '../execution.errors.js';
import { setHeader } from '../rest-request.js';
import { StoredSecrets } from '../stored-secrets.js';
import type { Authorization, ExecutionTarget, SecuritySchemeStrategy } from './security-scheme.strategy.js';

/** `http_bearer`: `Authorization: Bearer <token>` (RFC 6750). */
@Injectable()
export class HttpBearerSchemeStrategy implements SecuritySchemeStrategy {
  constructor(private readonly secrets: StoredSecrets) {}

  authorize(target: ExecutionTarget): Promise<Authorization> {
    const own = this.secrets.account(target.account, 'http_bearer');
    const token = own.token || this.secrets.appDefaults(target.function).http_bearer?.token;
    if (!token) {
      throw new ExecutionFailure(
        `No bearer token to send: the linked account has none and app ${target.function.fn.app.name} has no default token`,
      );
    }
    return Promise.resolve({
      credentials: { token },
      secrets: [token],
      apply: (request) => setHeader(request, 'Authorization', `Bearer ${token}`),
    });
  }
}
