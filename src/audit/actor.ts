/**
 * Who made an administrative change, as the audit log records it: the API key or MCP token that
 * authenticated the request (by id, never its value), an MCP client at its authorization server (by its
 * client id, e.g. revoking its own token), the command line, or the service itself (an end user completing a
 * connect link or an OAuth 2.0 callback, the periodic sync of remote MCP servers, a token family revoked on
 * reuse).
 */
export type ActorType = 'api_key' | 'mcp_token' | 'mcp_oauth_client' | 'cli' | 'system';

export interface Actor {
  type: ActorType;
  /** The key's or token's id, or the OAuth client's id; null for `cli` and `system`. */
  id: string | null;
}

export const ACTOR_TYPES: readonly ActorType[] = ['api_key', 'mcp_token', 'mcp_oauth_client', 'cli', 'system'];

export const CLI_ACTOR: Actor = Object.freeze({ type: 'cli', id: null });
export const SYSTEM_ACTOR: Actor = Object.freeze({ type: 'system', id: null });

export function apiKeyActor(apiKeyId: string): Actor {
  return { type: 'api_key', id: apiKeyId };
}

export function mcpTokenActor(tokenId: string): Actor {
  return { type: 'mcp_token', id: tokenId };
}

export function mcpOAuthClientActor(clientId: string): Actor {
  return { type: 'mcp_oauth_client', id: clientId };
}
