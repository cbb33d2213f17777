export const SECURITY_SCHEMES = ['no_auth', 'api_key', 'http_basic', 'http_bearer', 'oauth2'] as const;
export type SecurityScheme = (typeof SECURITY_SCHEMES)[number];

/** Scheme settings as the catalogue declares them (`apps.security_schemes`); the client secret is sealed apart. */
/** Where an end user finds the credentials of a scheme, shown beside the connect page's form. */
export interface CredentialsHint {
  /** A sentence or two, plain text ("Create a key under Settings → API keys."). */
  hint?: string;
  /** The page where they are found (https). */
  hint_url?: string;
}

export interface ApiKeySettings extends CredentialsHint {
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
  /** Absent means client_secret_basic (RFC 6749 §2.3.1); `none`: a public client (PKCE alone, no secret). */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /**
   * The resource the tokens are for (RFC 8707), sent in the authorization, token and refresh requests:
   * a remote MCP server's URL, whose authorization server binds its tokens to it.
   */
  resource?: string;
  redirect_url?: string;
  /** Dotted path to the tokens inside a provider's token response when it nests them. */
  token_response_path?: string;
  /** Extra query parameters of the authorization request. */
  authorize_params?: Record<string, string>;
  /** Plain words for scopes ("Read your calendars"), shown to the end user before the authorization. */
  scope_descriptions?: Record<string, string>;
}

/** The settings of each scheme an app offers (the catalogue's JSON Schema checks them at import). */
export interface SchemeSettingsByScheme {
  no_auth: Record<string, never>;
  api_key: ApiKeySettings;
  http_basic: CredentialsHint;
  http_bearer: CredentialsHint;
  oauth2: OAuth2Settings;
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
