import { Injectable } from '@nestjs/common';
import {
  type AuthorizationServerMetadata,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  type OAuthClientInformationFull,
  type OAuthProtectedResourceMetadata,
  registerClient,
} from '@modelcontextprotocol/client';
import { AppConfig } from '../config/app-config.js';
import { McpUpstream } from '../execution/mcp-upstream.js';
import { CALLBACK_PATH } from '../oauth2/oauth2.service.js';
import type { McpServerAuth } from './mcp-server-app.js';
import { McpServerRefusedError } from './mcp-servers.errors.js';

/** Where Patchbay serves its Client ID Metadata Document (McpServersController), under PUBLIC_BASE_URL. */
export const CLIENT_ID_DOCUMENT_PATH = '/v1/mcp-servers/oauth-client';

/** The server publishes no protected resource metadata: it wants another kind of credential than OAuth. */
export class NoProtectedResourceMetadata extends McpServerRefusedError {}

/**
 * Patchbay as an OAuth 2.0 client of remote MCP servers: the sign-in settings of a server's app,
 * found by discovery, and the Client ID Metadata Document that describes Patchbay to their
 * authorization servers.
 */
@Injectable()
export class McpServerOAuth {
  constructor(
    private readonly upstream: McpUpstream,
    private readonly config: AppConfig,
  ) {}

  /**
   * The app's OAuth 2.0 settings, found as the MCP authorization specification says: the server's
   * protected resource metadata (RFC 9728) names its authorization server, whose metadata (RFC 8414)
   * gives the endpoints; Patchbay registers itself there (RFC 7591) unless a client is given. Tokens are
   * asked for the server as the resource (RFC 8707), with PKCE, through Patchbay's usual linking paths.
   */
  async scheme(
    serverUrl: string,
    auth: Extract<McpServerAuth, { scheme: 'oauth2' }>,
  ): Promise<Record<string, unknown>> {
    const fetchFn = this.upstream.fetch;
    const where = new URL(serverUrl).origin;
    let resource: OAuthProtectedResourceMetadata;
    try {
      resource = await discoverOAuthProtectedResourceMetadata(serverUrl, {}, fetchFn);
    } catch (error) {
      throw new NoProtectedResourceMetadata(
        `${where} publishes no OAuth protected resource metadata (RFC 9728): ${message(error)}`,
      );
    }
    const issuer = resource.authorization_servers?.[0];
    if (!issuer) {
      throw new McpServerRefusedError(`${where}'s protected resource metadata names no authorization server`);
    }
    let metadata: AuthorizationServerMetadata | undefined;
    try {
      metadata = await discoverAuthorizationServerMetadata(issuer, { fetchFn });
    } catch (error) {
      throw new McpServerRefusedError(`${issuer}: ${message(error)}`);
    }
    if (!metadata) {
      throw new McpServerRefusedError(`${issuer} publishes no authorization server metadata (RFC 8414)`);
    }
    if (!(metadata.code_challenge_methods_supported ?? []).includes('S256')) {
      throw new McpServerRefusedError(`${issuer} does not offer PKCE with S256, which the MCP specification requires`);
    }
    const scopes = [...(resource.scopes_supported ?? [])];
    if ((metadata.scopes_supported ?? []).includes('offline_access') && !scopes.includes('offline_access')) {
      scopes.push('offline_access');
    }
    const scope = scopes.join(' ');
    // As the MCP authorization specification orders them: a client given, else Patchbay's Client ID
    // Metadata Document when the authorization server takes one, else dynamic registration.
    const client = auth.clientId
      ? { id: auth.clientId, secret: auth.clientSecret ?? '', method: 'client_secret_basic' as const }
      : this.takesClientIdDocument(metadata)
        ? { id: this.clientIdDocumentUrl, secret: '', method: 'none' as const }
        : await this.register(issuer, metadata, scope, fetchFn);
    const method = client.secret ? client.method : 'none';
    return {
      location: 'header',
      name: 'Authorization',
      prefix: 'Bearer',
      client_id: client.id,
      client_secret: client.secret,
      scope,
      authorize_url: metadata.authorization_endpoint,
      access_token_url: metadata.token_endpoint,
      refresh_token_url: metadata.token_endpoint,
      token_endpoint_auth_method: method,
      resource: resource.resource || serverUrl,
    };
  }

  /** Where Patchbay's Client ID Metadata Document is served: the client_id it stands for. */
  get clientIdDocumentUrl(): string {
    return `${this.config.publicBaseUrl}${CLIENT_ID_DOCUMENT_PATH}`;
  }

  /**
   * Patchbay as an OAuth 2.0 client, described at its own URL (the OAuth Client ID Metadata Document):
   * a public client (PKCE, no secret) whose redirect URI is Patchbay's OAuth 2.0 callback.
   */
  clientMetadataDocument(): {
    client_id: string;
    client_name: string;
    client_uri: string;
    redirect_uris: string[];
    grant_types: string[];
    response_types: string[];
    token_endpoint_auth_method: string;
  } {
    return {
      client_id: this.clientIdDocumentUrl,
      client_name: 'Patchbay',
      client_uri: this.config.publicBaseUrl,
      redirect_uris: [`${this.config.publicBaseUrl}${CALLBACK_PATH}`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /**
   * The authorization server fetches client metadata from a client_id URL, and Patchbay's document can be
   * fetched: at an https URL (an http one only where private networks are allowed, as in tests).
   */
  private takesClientIdDocument(metadata: AuthorizationServerMetadata): boolean {
    if (metadata.client_id_metadata_document_supported !== true) {
      return false;
    }
    return new URL(this.clientIdDocumentUrl).protocol === 'https:' || this.config.MCP_SERVERS_ALLOW_PRIVATE_NETWORKS;
  }

  /** Dynamic client registration (RFC 7591), as a confidential client when the server allows it. */
  private async register(
    issuer: string,
    metadata: AuthorizationServerMetadata,
    scope: string,
    fetchFn: typeof this.upstream.fetch,
  ): Promise<{ id: string; secret: string; method: 'client_secret_basic' | 'client_secret_post' | 'none' }> {
    if (!metadata.registration_endpoint) {
      throw new McpServerRefusedError(
        `${issuer} offers no dynamic client registration: give the client Patchbay is registered as with --client-id and --client-secret`,
      );
    }
    const offered = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    const method = offered.includes('client_secret_basic')
      ? 'client_secret_basic'
      : offered.includes('client_secret_post')
        ? 'client_secret_post'
        : 'none';
    let registered: OAuthClientInformationFull;
    try {
      registered = await registerClient(issuer, {
        metadata,
        clientMetadata: {
          client_name: 'Patchbay',
          redirect_uris: [`${this.config.publicBaseUrl}${CALLBACK_PATH}`],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: method,
          ...(scope ? { scope } : {}),
        },
        fetchFn,
      });
    } catch (error) {
      throw new McpServerRefusedError(`${issuer} refused to register Patchbay: ${message(error)}`);
    }
    return { id: registered.client_id, secret: registered.client_secret ?? '', method };
  }
}

function message(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}
