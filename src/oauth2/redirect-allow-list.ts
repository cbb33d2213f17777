import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { RedirectUrlNotAllowedError } from './oauth2.errors.js';

/**
 * The origins a browser (or a webhook) may be sent to after linking: PUBLIC_BASE_URL's origin, then
 * those listed in OAUTH2_REDIRECT_ALLOWED_ORIGINS (comma-separated). One rule for every such URL
 * (OAuth 2.0 linking's after-redirect, connect links' after-redirect and webhook).
 */
@Injectable()
export class RedirectAllowList {
  readonly origins: string[];

  constructor(config: AppConfig) {
    this.origins = allowedRedirectOrigins(config);
  }

  /** Throws RedirectUrlNotAllowedError naming `field` when the URL's origin is not allowed. */
  check(url: string, field: string): void {
    const origin = new URL(url).origin;
    if (!this.origins.includes(origin)) {
      throw new RedirectUrlNotAllowedError(field, origin, this.origins);
    }
  }
}

function allowedRedirectOrigins(config: AppConfig): string[] {
  const origins = [new URL(config.publicBaseUrl).origin];
  for (const entry of (config.OAUTH2_REDIRECT_ALLOWED_ORIGINS ?? '').split(',')) {
    const trimmed = entry.trim();
    if (!trimmed) {
      continue;
    }
    try {
      const origin = new URL(trimmed).origin;
      if (origin !== 'null' && !origins.includes(origin)) {
        origins.push(origin);
      }
    } catch {
      // Not a URL: it cannot match any redirect URL's origin, so it allows nothing.
    }
  }
  return origins;
}
