import type { OAuth2Settings } from '../apps/security-scheme.js';
import { OAuth2ClientNotConfiguredError } from './oauth2.errors.js';

/** A catalogue value still holding an unfilled `{{PLACEHOLDER}}`: not a usable client id or secret. */
const PLACEHOLDER = /\{\{.*\}\}/;

/** The oauth2 entry of a configuration's `security_scheme_overrides` (the secret is sealed apart). */
export interface OAuth2Override {
  client_id?: unknown;
  redirect_url?: unknown;
  scope?: unknown;
}

export interface ResolvedOAuth2Client {
  clientId: string;
  clientSecret: string;
  /** The override's redirect URL and scope, when it has them (they win over the catalogue's). */
  redirectUrl?: string;
  scope?: string;
}

/**
 * The one rule for which OAuth 2.0 client a project uses for an app, shared by linking and by token
 * refresh: the configuration's override (its client id and its sealed secret) when there is one,
 * else the catalogue's client. A missing value or an unfilled catalogue placeholder is refused with
 * OAuth2ClientNotConfiguredError naming what to set. `secret` opens the override's secret when
 * asked with true, the app's otherwise, so only the one in use is opened.
 */
export function resolveOAuth2Client(
  appName: string,
  scheme: Partial<Pick<OAuth2Settings, 'client_id' | 'token_endpoint_auth_method'>>,
  override: OAuth2Override | undefined,
  secret: (fromOverride: boolean) => string | undefined,
): ResolvedOAuth2Client {
  const clientId = override ? override.client_id : scheme.client_id;
  if (typeof clientId !== 'string' || !clientId || PLACEHOLDER.test(clientId)) {
    throw new OAuth2ClientNotConfiguredError(appName, 'client id');
  }
  // A public client (RFC 6749 §2.1: PKCE alone, `token_endpoint_auth_method: none`) has no secret to find.
  const isPublic = scheme.token_endpoint_auth_method === 'none';
  const clientSecret = isPublic ? '' : secret(override !== undefined);
  if (clientSecret === undefined || (!isPublic && (!clientSecret || PLACEHOLDER.test(clientSecret)))) {
    throw new OAuth2ClientNotConfiguredError(appName, 'client secret');
  }
  return {
    clientId,
    clientSecret,
    redirectUrl: typeof override?.redirect_url === 'string' ? override.redirect_url : undefined,
    scope: typeof override?.scope === 'string' ? override.scope : undefined,
  };
}

/** The scope an authorization asks for: the override's when it has one, else the catalogue's. */
export function requestedScope(
  scheme: Partial<Pick<OAuth2Settings, 'scope'>> | undefined,
  override: OAuth2Override | undefined,
): string {
  return (typeof override?.scope === 'string' ? override.scope : (scheme?.scope ?? '')).trim();
}

/** Each scope of `scope` with the catalogue's plain words for it, when it has them. */
export function describedScopes(
  scope: string,
  descriptions: Record<string, string> | undefined,
): { scope: string; description: string | null }[] {
  return [...new Set(scope.split(/\s+/).filter(Boolean))].map((name) => ({
    scope: name,
    description: typeof descriptions?.[name] === 'string' ? descriptions[name] : null,
  }));
}
