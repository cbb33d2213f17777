export const SECURITY_SCHEMES = ['no_auth', 'api_key', 'http_basic', 'http_bearer', 'oauth2'] as const;
export type SecurityScheme = (typeof SECURITY_SCHEMES)[number];
