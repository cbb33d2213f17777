import type { SecurityScheme } from '../apps/security-scheme.js';

/**
 * The stored credential formats, written by linking and read by execution: `linked_accounts.credentials`
 * is `SecretBox.sealJson` of the shape of the account's scheme.
 */
export interface ApiKeyCredentials {
  api_key: string;
}

export interface HttpBasicCredentials {
  username: string;
  password: string;
}

export interface HttpBearerCredentials {
  token: string;
}

/** What OAuth 2.0 linking stores and a refresh rewrites (a rotated refresh token replaces the old one). */
export interface OAuth2Credentials {
  access_token: string;
  refresh_token?: string;
  /** Epoch seconds; absent when the provider did not say when the token expires. */
  expires_at?: number;
  /** Space-separated, as granted. */
  scope?: string;
  token_type?: string;
}

/** The credentials an account of each scheme stores. */
export interface CredentialsByScheme {
  no_auth: Record<string, never>;
  api_key: ApiKeyCredentials;
  http_basic: HttpBasicCredentials;
  http_bearer: HttpBearerCredentials;
  oauth2: OAuth2Credentials;
}

/** What the link endpoints and connect pages store (OAuth 2.0 tokens come from the OAuth 2.0 flow). */
export type LinkedAccountCredentials = CredentialsByScheme[Exclude<SecurityScheme, 'oauth2'>];
