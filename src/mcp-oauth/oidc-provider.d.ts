/**
 * The part of oidc-provider 9 (which ships no types) that Patchbay's MCP authorization server and
 * the OAuth 2.0 tests use.
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
    clientName?: string;
    clientUri?: string;
    logoUri?: string;
    redirectUris: string[];
    clientAuthMethod?: string;
    grantTypeAllowed(type: string): boolean;
  }

  export interface KoaContext {
    path: string;
    method: string;
    status: number;
    body: unknown;
    type: string;
    get(header: string): string;
    set(header: string, value: string): void;
    oidc: {
      route?: string;
      params?: Record<string, unknown>;
      client?: Client;
      entities: Record<string, unknown>;
    };
  }

  export interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  export interface AdapterPayload {
    [key: string]: unknown;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Configuration {
    clients?: ClientMetadata[];
    pkce?: { required?: (ctx: KoaContext, client: Client) => boolean };
    scopes?: string[];
    issueRefreshToken?: (ctx: KoaContext, client: Client, code: unknown) => boolean | Promise<boolean>;
    rotateRefreshToken?: boolean;
    /** Seconds, or a function of the request (the token endpoint's parameters are in ctx.oidc.params). */
    ttl?: Record<string, number | ((ctx: KoaContext & { oidc: { params?: Record<string, unknown> } }) => number)>;
    cookies?: { keys?: string[]; [key: string]: unknown };
    findAccount?: (ctx: KoaContext, id: string) => Account | undefined | Promise<Account | undefined>;
    [key: string]: unknown;
  }

  export interface InteractionDetails {
    uid: string;
    returnTo: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string };
    grantId?: string;
    exp: number;
  }

  export interface Interaction extends InteractionDetails {
    result?: Record<string, unknown>;
    save(ttl: number): Promise<string>;
  }

  export interface Grant {
    jti: string;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface AccessToken {
    jti: string;
    /** Expiry, in seconds since the epoch. */
    exp?: number;
    accountId: string;
    clientId: string;
    grantId: string;
    aud?: string | string[];
    scope?: string;
    isExpired: boolean;
  }

  export class OIDCProviderError extends Error {
    status: number;
    error: string;
    error_description?: string;
  }

  export const errors: {
    InvalidTarget: new (description?: string) => OIDCProviderError;
    InvalidGrant: new (description?: string) => OIDCProviderError;
    InvalidClientMetadata: new (description?: string) => OIDCProviderError;
    InvalidClient: new (description?: string) => OIDCProviderError;
    InvalidRequest: new (description?: string) => OIDCProviderError;
    [name: string]: new (description?: string) => OIDCProviderError;
  };

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    proxy: boolean;
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: string, listener: (...args: never[]) => void): void;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      request: IncomingMessage,
      response: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    Interaction: { find(uid: string): Promise<Interaction | undefined> };
    Grant: {
      new (properties: { accountId: string; clientId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    Client: { find(id: string): Promise<Client | undefined> };
    AccessToken: { find(value: string): Promise<AccessToken | undefined> };
  }
}
