/**
 * The addresses of a project's MCP endpoint and of its authorization server. The address a
 * developer hands to an MCP client identifies the project, so that discovery leads to that
 * project's identity provider: it is the OAuth resource, the access tokens' audience and the
 * authorization server's issuer.
 */
export const MCP_PROJECT_PREFIX = '/v1/mcp/p';
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';
/** The only scope: act at the project's MCP address as the signed-in user (apps and owner as consented). */
export const MCP_SCOPE = 'mcp';

export function projectMcpPath(projectId: string): string {
  return `${MCP_PROJECT_PREFIX}/${projectId}`;
}

export function projectMcpUrl(publicBaseUrl: string, projectId: string): string {
  return `${publicBaseUrl}${projectMcpPath(projectId)}`;
}

/** RFC 9728 §3.1: the well-known segment goes between the host and the resource's path. */
export function protectedResourceMetadataUrl(publicBaseUrl: string, projectId: string): string {
  return `${publicBaseUrl}${PROTECTED_RESOURCE_WELL_KNOWN}${projectMcpPath(projectId)}`;
}

const PROJECT_PATH = /^\/v1\/mcp\/p\/([^/?#]+)\/?(?:[?#]|$)/;

/** The project a request to a per-project MCP address names (its path), or null for plain /v1/mcp. */
export function projectOfMcpPath(url: string): string | null {
  return PROJECT_PATH.exec(url)?.[1] ?? null;
}
