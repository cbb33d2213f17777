import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type ClientCapabilities as ModernCapabilities,
  type ElicitRequestURLParams,
  type ElicitResult,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

/** The protocol revisions /v1/mcp serves, each driven by its SDK's own client. */
export type McpRevision = '2025-11-25' | '2026-07-28';
export const REVISIONS: McpRevision[] = ['2025-11-25', '2026-07-28'];

export interface ConnectOptions {
  headers?: Record<string, string>;
  query?: Record<string, string>;
  capabilities?: ClientCapabilities;
  protocolVersion?: string;
  /**
   * `2025-11-25` (default): the v1 SDK client (`@modelcontextprotocol/sdk`), initialize and a session.
   * `2026-07-28`: the v2 SDK client (`@modelcontextprotocol/client`) pinned to that revision:
   * server/discover, then per-request envelopes.
   */
  revision?: McpRevision;
  /** 2026-07-28: answers the URL elicitations of input-required results (the user opening the link). */
  onUrlElicitation?: (params: ElicitRequestURLParams) => Promise<ElicitResult>;
}

/** What the tests use of either SDK's client (the same calls and result shapes in both). */
export type McpTestClient = Pick<Client, 'listTools' | 'callTool' | 'close' | 'getServerVersion'>;

export function mcpUrl(baseUrl: string, query: Record<string, string> = {}): URL {
  const url = new URL('/v1/mcp', baseUrl);
  for (const [key, value] of Object.entries(query)) {
    url.searchParams.set(key, value);
  }
  return url;
}

/** The SDK's own client over real HTTP to /v1/mcp of `baseUrl`, speaking `options.revision`. */
export async function connectMcp(baseUrl: string, options: ConnectOptions = {}) {
  const url = mcpUrl(baseUrl, options.query);
  if (options.revision === '2026-07-28') {
    const { client, transport } = await connectModern(baseUrl, options);
    return { client: client as unknown as McpTestClient, transport, revision: options.revision };
  }
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: options.headers ?? {} } });
  const client = new Client({ name: 'patchbay-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  await client.connect(transport);
  return { client: client as McpTestClient, transport, revision: '2025-11-25' as const };
}

/** The v2 SDK client pinned to 2026-07-28, with its own types (listen, discover). */
export async function connectModern(baseUrl: string, options: ConnectOptions = {}) {
  const transport = new ModernTransport(mcpUrl(baseUrl, options.query), {
    requestInit: { headers: options.headers ?? {} },
  });
  const client = new ModernClient(
    { name: 'patchbay-test', version: '2.0.0' },
    {
      capabilities: (options.capabilities ?? {}) as ModernCapabilities,
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  const answer = options.onUrlElicitation;
  if (answer) {
    client.setRequestHandler('elicitation/create', (request) => {
      const params = request.params;
      if (params.mode !== 'url') {
        return { action: 'decline' };
      }
      return answer(params);
    });
  }
  await client.connect(transport);
  return { client, transport };
}

/** A JSON-RPC message POSTed by hand, for what an SDK client would not send. */
export async function postMcp(baseUrl: string, body: unknown, headers: Record<string, string> = {}, path = '/v1/mcp') {
  const response = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : null };
}

/** The per-request envelope a 2026-07-28 request carries in `params._meta`. */
export const modernEnvelope = (capabilities: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'by-hand', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

/** A 2026-07-28 request POSTed by hand, with the envelope and the standard headers the revision requires. */
export function postModern(
  baseUrl: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
  query: Record<string, string> = {},
) {
  const url = mcpUrl(baseUrl, query);
  return postMcp(
    baseUrl,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: modernEnvelope() } },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...headers },
    `${url.pathname}${url.search}`,
  );
}
