import { Injectable } from '@nestjs/common';
import type { Authorization, SecuritySchemeStrategy } from './security-scheme.strategy.js';

const NOTHING: Authorization = { credentials: {}, secrets: [], apply: () => undefined };

/** `no_auth`: the request goes out as the function describes it. */
@Injectable()
export class NoAuthSchemeStrategy implements SecuritySchemeStrategy {
  authorize(): Promise<Authorization> {
    return Promise.resolve(NOTHING);
  }
}
