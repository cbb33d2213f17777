import { Injectable } from '@nestjs/common';
import { ExecutionFailure } from '../execution.errors.js';
import { setHeader } from '../rest-request.js';
import { StoredSecrets } from '../stored-secrets.js';
import type { Authorization, ExecutionTarget, SecuritySchemeStrategy } from './security-scheme.strategy.js';

/** `http_basic`: `Authorization: Basic base64(username:password)` (RFC 7617). */
@Injectable()
export class HttpBasicSchemeStrategy implements SecuritySchemeStrategy {
  constructor(private readonly secrets: StoredSecrets) {}

  authorize(target: ExecutionTarget): Promise<Authorization> {
    const own = this.secrets.account(target.account, 'http_basic');
    const pair = own.username
      ? { username: own.username, password: own.password ?? '' }
      : this.secrets.appDefaults(target.function).http_basic;
    if (!pair?.username) {
      throw new ExecutionFailure(
        `No user name and password to send: the linked account has none and app ${target.function.fn.app.name} ` +
          'has no default ones',
      );
    }
    const encoded = Buffer.from(`${pair.username}:${pair.password}`, 'utf8').toString('base64');
    return Promise.resolve({
      credentials: { username: pair.username, password: pair.password },
      secrets: [pair.password, encoded],
      apply: (request) => setHeader(request, 'Authorization', `Basic ${encoded}`),
    });
  }
}
