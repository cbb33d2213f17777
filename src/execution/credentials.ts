/**
 * The stored credential formats, shared by the modules that write them (linking) and the one that
 * reads them (execution). `linked_accounts.credentials` is `SecretBox.sealJson` of the shape of the
 * account's scheme.
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

/**
 * An app's `default_security_credentials_by_scheme` (sealed in `apps.secrets`): used when a linked
 * account has no credentials of its own for the scheme.
 */
export interface DefaultCredentialsByScheme {
  api_key?: { secret_key: string };
  http_basic?: { username: string; password: string };
  http_bearer?: { token: string };
}

/** Scheme settings as the catalogue declares them (`apps.security_schemes`). */
export interface ApiKeySettings {
  location: 'header' | 'query' | 'cookie' | 'body';
  name: string;
  prefix?: string | null;
}

export interface OAuth2Settings {
  location: 'header' | 'query' | 'cookie' | 'body';
  name: string;
  prefix?: string | null;
  client_id: string;
  scope: string;
  authorize_url: string;
  access_token_url: string;
  refresh_token_url: string;
  /** Absent means client_secret_basic (RFC 6749 §2.3.1). */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
  redirect_url?: string;
  /** Dotted path to the tokens inside a provider's token response when it nests them. */
  token_response_path?: string;
}
