import type { AppEntity } from '../apps/app.entity.js';
import type { SecurityScheme } from '../apps/security-scheme.js';
import type { AppFile } from '../catalog/catalog-files.js';
import { cleanText } from '../catalog/openapi/openapi-schema.js';
import type { McpEndpoint, McpServerDescription } from '../execution/mcp-upstream.js';
import { stripControl } from './mcp-tool-records.js';

/**
 * The app a remote MCP server becomes: its catalogue file, made from the server's description and
 * how its end users sign in, and the credentials its tools are listed with.
 */

/** How an app's end users sign in to the server: what `--auth` names. */
export type McpServerAuth =
  | { scheme: 'no_auth' }
  | { scheme: 'http_bearer' }
  | { scheme: 'api_key'; header: string }
  /** The MCP authorization specification: discovery, then a client registered by DCR or given. */
  | { scheme: 'oauth2'; clientId?: string; clientSecret?: string };

const MAX_SERVER_DESCRIPTION_CHARS = 600;

/** The headers that carry a listing-time credential for the given scheme. */
export function endpointFor(url: string, auth: McpServerAuth, token: string | undefined): McpEndpoint {
  if (!token) {
    return { url, headers: {} };
  }
  switch (auth.scheme) {
    case 'no_auth':
      return { url, headers: {} };
    case 'http_bearer':
    case 'oauth2':
      return { url, headers: { Authorization: `Bearer ${token}` } };
    case 'api_key':
      return { url, headers: { [auth.header]: token } };
  }
}

export function hasCredentials(endpoint: McpEndpoint): boolean {
  return Object.keys(endpoint.headers).length > 0;
}

/** A server known only by its address, until a sync with a token reads its description. */
export function unnamedServer(serverUrl: string): McpServerDescription {
  return {
    serverInfo: { name: new URL(serverUrl).hostname, version: '' },
    protocolVersion: undefined,
    instructions: undefined,
  };
}

export function authOf(securitySchemes: object): McpServerAuth {
  const schemes = securitySchemes as Partial<Record<SecurityScheme, Record<string, unknown>>>;
  if (schemes.api_key && typeof schemes.api_key.name === 'string') {
    return { scheme: 'api_key', header: schemes.api_key.name };
  }
  if (schemes.http_bearer) {
    return { scheme: 'http_bearer' };
  }
  if (schemes.oauth2) {
    return { scheme: 'oauth2' };
  }
  return { scheme: 'no_auth' };
}

/** The stored app as the writer takes it; written only if its hash differs from the stored one, which it never does. */
export function storedAppFile(app: AppEntity): AppFile {
  return {
    name: app.name,
    display_name: app.display_name,
    provider: app.provider,
    version: app.version,
    description: app.description,
    logo: app.logo || null,
    categories: app.categories,
    visibility: app.visibility,
    active: app.active,
    security_schemes: app.security_schemes as Record<string, Record<string, unknown>>,
    default_security_credentials_by_scheme: {},
  };
}

export function appFile(
  name: string,
  serverUrl: string,
  description: McpServerDescription,
  auth: McpServerAuth,
  /** With `projectId`, the project's own app: private, seen by that project alone. */
  options: { displayName?: string; categories?: string[]; projectId?: string },
  given?: Record<string, Record<string, unknown>>,
): AppFile {
  const info = description.serverInfo;
  const displayName = options.displayName ?? stripControl(info.title ?? info.name ?? name) ?? name;
  const text =
    stripControl(cleanText(description.instructions ?? info.description ?? '', MAX_SERVER_DESCRIPTION_CHARS)) ||
    `Tools of the MCP server ${displayName} (${new URL(serverUrl).host})`;
  const schemes: Record<string, Record<string, unknown>> = {};
  switch (auth.scheme) {
    case 'no_auth':
      schemes.no_auth = {};
      break;
    case 'http_bearer':
      schemes.http_bearer = {};
      break;
    case 'api_key':
      schemes.api_key = { location: 'header', name: auth.header };
      break;
    case 'oauth2':
      Object.assign(schemes, given);
      break;
  }
  return {
    name,
    display_name: displayName || name,
    provider: stripControl(info.name ?? new URL(serverUrl).host),
    version: stripControl(info.version ?? '') || '1',
    description: text,
    logo: null,
    categories: options.categories ?? [],
    visibility: options.projectId ? 'private' : 'public',
    active: true,
    security_schemes: schemes,
    default_security_credentials_by_scheme: {},
  };
}
