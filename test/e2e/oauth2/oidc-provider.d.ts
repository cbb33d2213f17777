/**
 * The part of oidc-provider 9 (which ships no types) that the OAuth 2.0 tests use.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris?: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    [key: string]: unknown;
  }

  export interface Client {
    clientId: string;
    grantTypeAllowed(type: string): boolean;
  }

  export interface KoaContext {
    path: string;
    status: number;
    body: unknown;
    get(header: string): string;
  }

  export interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  export interface Configuration {
    clients?: ClientMetadata[];
    pkce?: { required?: (ctx: KoaContext, client: Client) => boolean };
    scopes?: string[];
    issueRefreshToken?: (ctx: KoaContext, client: Client, code: unknown) => boolean | Promise<boolean>;
    rotateRefreshToken?: boolean;
    /** Seconds, or a function of the request (the token endpoint's parameters are in ctx.oidc.params). */
    ttl?: Record<string, number | ((ctx: KoaContext & { oidc: { params?: Record<string, unknown> } }) => number)>;
    cookies?: { keys?: string[] };
    findAccount?: (ctx: KoaContext, id: string) => Account | undefined | Promise<Account | undefined>;
    [key: string]: unknown;
  }

  /** An issued access token as the provider keeps it (opaque tokens are looked up by their value). */
  export interface AccessTokenRecord {
    accountId: string;
    aud?: string | string[];
    scope?: string;
    isExpired: boolean;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly AccessToken: { find(value: string): Promise<AccessTokenRecord | undefined> };
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
