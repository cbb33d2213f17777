import { once } from 'node:events';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type JSONRPCMessage, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

export interface McpBridgeOptions {
  url: string;
  apiKey?: string;
  token?: string;
  owner?: string;
  mode?: string;
  apps?: string;
}

const log = (text: string) => process.stderr.write(`patchbay mcp: ${text}\n`);

/** The /v1/mcp address for a service base URL (or a URL that already names /v1/mcp), with mode and apps. */
export function mcpEndpoint(options: McpBridgeOptions): URL {
  const url = new URL(options.url);
  if (!url.pathname.replace(/\/+$/, '').endsWith('/v1/mcp')) {
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/mcp`;
  }
  if (options.mode) {
    url.searchParams.set('mode', options.mode);
  }
  if (options.apps) {
    url.searchParams.set('apps', options.apps);
  }
  return url;
}

/**
 * `patchbay mcp`: MCP on standard input/output for local clients, every message forwarded to a
 * running Patchbay's /v1/mcp over HTTP (so it never opens DATA_DIR itself). Standard output carries
 * only MCP messages; diagnostics go to standard error. Resolves when standard input ends. Both
 * protocol revisions pass through: a 2026-07-28 message names its revision in its own `_meta`, and
 * the v2 client transport derives the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers from it
 * (a `subscriptions/listen` answer is a stream whose notifications are forwarded as they come).
 */
export async function runMcpBridge(options: McpBridgeOptions): Promise<void> {
  const headers: Record<string, string> = {};
  if (options.token) {
    headers.authorization = `Bearer ${options.token}`;
  } else if (options.apiKey) {
    headers['x-api-key'] = options.apiKey;
  }
  if (options.owner) {
    headers['x-linked-account-owner-id'] = options.owner;
  }
  const endpoint = mcpEndpoint(options);
  const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } });
  const local = new StdioServerTransport();
  const initializeIds = new Set<string | number>();

  local.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      initializeIds.add(message.id);
    }
    remote.send(message).catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      log(`forwarding to ${endpoint.origin} failed: ${reason}`);
      if ('id' in message && 'method' in message) {
        void local.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: ProtocolErrorCode.InternalError, message: reason },
        });
      }
    });
  };
  remote.onmessage = (message: JSONRPCMessage) => {
    // Later requests carry the negotiated version in their MCP-Protocol-Version header.
    if ('id' in message && 'result' in message && initializeIds.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') {
        remote.setProtocolVersion(version);
      }
    }
    void local.send(message);
  };
  remote.onerror = (error) => log(error.message);
  local.onerror = (error) => log(error.message);

  await remote.start();
  await local.start();
  log(`forwarding standard input to ${endpoint.origin}${endpoint.pathname}`);
  if (!process.stdin.readableEnded) {
    await once(process.stdin, 'end');
  }
  await remote.terminateSession().catch(() => undefined);
  await remote.close();
  await local.close();
}
