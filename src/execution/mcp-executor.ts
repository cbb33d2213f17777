import { Injectable } from '@nestjs/common';
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { McpProtocolData } from '../functions/function.entity.js';
import { ExecutionFailure, type RunOutcome } from './execution.errors.js';
import { type McpEndpoint, McpUpstream, McpUpstreamFailure } from './mcp-upstream.js';
import type { OutboundRequest } from './rest-request.js';
import type { Authorization } from './strategies/security-scheme.strategy.js';

/** Longest text of an `isError` result kept as the execution's error. */
const MAX_ERROR_CHARS = 4000;

/**
 * Runs a tool of a remote MCP server (`protocol: mcp`): the scheme's strategy places the end user's
 * credentials as it would on a REST request (a header, the query string or a cookie), then
 * `tools/call` goes to the server with the function's input as the tool's arguments.
 *
 * The result maps to `{success, data, error}`: `structuredContent` is the data; otherwise one text
 * block is the data (parsed when it is JSON), several blocks or other kinds are `{content: [...]}`;
 * `isError` is a failure whose error is the result's text.
 */
@Injectable()
export class McpExecutor {
  constructor(private readonly upstream: McpUpstream) {}

  async execute(
    protocol: McpProtocolData,
    input: Record<string, unknown>,
    authorization: Authorization,
    appName: string,
  ): Promise<RunOutcome> {
    const endpoint = { ...placeCredentials(protocol.server_url, authorization), app: appName };
    let result: CallToolResult;
    try {
      result = await this.upstream.callTool(endpoint, protocol.tool, input);
    } catch (error) {
      if (error instanceof McpUpstreamFailure) {
        return { success: false, data: null, error: error.message, upstreamStatus: null };
      }
      throw error;
    }
    return toOutcome(result);
  }
}

/** The server's address and headers with the credentials where the app's scheme says they go. */
export function placeCredentials(serverUrl: string, authorization: Authorization): McpEndpoint {
  const url = new URL(serverUrl);
  const request: OutboundRequest = {
    method: 'POST',
    origin: url.origin,
    path: url.pathname,
    query: [],
    headers: new Map(),
    cookies: new Map(),
    body: undefined,
  };
  authorization.apply(request);
  if (request.body !== undefined && Object.keys(request.body).length > 0) {
    throw new ExecutionFailure('An MCP server cannot take a credential in the request body; configure a header');
  }
  for (const [name, value] of request.query) {
    url.searchParams.set(name, value);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers.values()) {
    headers[name] = value;
  }
  if (request.cookies.size > 0) {
    headers.Cookie = [...request.cookies].map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('; ');
  }
  return { url: url.toString(), headers, server: serverUrl };
}

export function toOutcome(result: CallToolResult): RunOutcome {
  if (result.isError) {
    const text = textOf(result).slice(0, MAX_ERROR_CHARS);
    return {
      success: false,
      data: null,
      error: text || 'The MCP tool reported an error without a message',
      upstreamStatus: null,
    };
  }
  if (result.structuredContent !== undefined) {
    return { success: true, data: result.structuredContent, error: null, upstreamStatus: null };
  }
  const content = Array.isArray(result.content) ? result.content : [];
  if (content.length === 1 && content[0].type === 'text') {
    return { success: true, data: parseJsonText(content[0].text), error: null, upstreamStatus: null };
  }
  if (content.length === 0) {
    return { success: true, data: {}, error: null, upstreamStatus: null };
  }
  return { success: true, data: { content }, error: null, upstreamStatus: null };
}

function textOf(result: CallToolResult): string {
  const content = Array.isArray(result.content) ? result.content : [];
  return content
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n');
}

function parseJsonText(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
