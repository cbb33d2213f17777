import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

export interface ConnectOptions {
  headers?: Record<string, string>;
  query?: Record<string, string>;
  capabilities?: ClientCapabilities;
  protocolVersion?: string;
}

/** The SDK's own client over real HTTP to /v1/mcp of `baseUrl`. */
export async function connectMcp(baseUrl: string, options: ConnectOptions = {}) {
  const url = new URL('/v1/mcp', baseUrl);
  for (const [key, value] of Object.entries(options.query ?? {})) {
    url.searchParams.set(key, value);
  }
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: options.headers ?? {} } });
  const client = new Client({ name: 'patchbay-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
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
