import { createHash } from 'node:crypto';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import {
  type CallToolResult,
  Client,
  type Implementation,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { Agent, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { publicOnlyLookup } from '../../libs/common/src/index.js';
import { AppConfig } from '../config/app-config.js';
import { API_VERSION } from '../config/api-version.js';
import { dispatcherFetch, type FetchLike } from './dispatcher-fetch.js';

/** Where a remote MCP server is and the credentials a call carries (already placed by the scheme's strategy). */
export interface McpEndpoint {
  /** The server's URL, with any credential the scheme puts in the query string. */
  url: string;
  headers: Record<string, string>;
  /** The server's URL as registered, without credentials (`url` when absent): what a tool-list change names. */
  server?: string;
  /**
   * The app whose call opened the connection: a tool-list change announced on it syncs that app and the
   * catalogue's apps at the server, never another project's own app (its credentials are not that project's).
   */
  app?: string;
}

/** A server announced `notifications/tools/list_changed` on a connection held with these credentials. */
export type ToolsListChangedListener = (server: string, endpoint: McpEndpoint) => void;

export interface McpServerDescription {
  serverInfo: Implementation;
  protocolVersion: string | undefined;
  instructions: string | undefined;
}

/** Why a call to a remote MCP server produced no result; the message names the server's origin only. */
export class McpUpstreamFailure extends Error {
  constructor(
    readonly kind: 'unauthorized' | 'timeout' | 'unreachable' | 'too_large' | 'protocol' | 'input_required',
    message: string,
  ) {
    super(message);
    this.name = 'McpUpstreamFailure';
  }
}

interface Connection {
  client: Client;
  /** Settles once the handshake (initialize, or server/discover) is done. */
  ready: Promise<void>;
}

/** Connections kept for reuse: a 2025-11-25 server's session lives on in it, so a call skips the handshake. */
const MAX_CONNECTIONS = 500;
const CONNECTION_IDLE_MS = 5 * 60_000;
/** A tools/list page as read: each tool is checked on its own by whoever maps it. */
const TOOLS_PAGE = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** Notifications of one connection within this time count as one (the SDK's own debounce). */
const LIST_CHANGED_DEBOUNCE_MS = 200;

/** Pages of tools/list read at most: 10,000 tools at the usual 100 a page, with room. */
export const MAX_TOOL_PAGES = 200;

/**
 * Patchbay as a client of remote MCP servers (`protocol: mcp` functions): the official v2 client
 * over Streamable HTTP, speaking 2026-07-28 to servers that answer `server/discover` and the
 * 2025-11-25 handshake to the others. One connection per (server, credentials), reused while it
 * lives; every exchange is bounded in time (EXECUTION_TIMEOUT_MS) and in size
 * (EXECUTION_MAX_RESPONSE_BYTES, counted by undici as the body streams in), and connects only to
 * public addresses unless MCP_SERVERS_ALLOW_PRIVATE_NETWORKS is set.
 *
 * Patchbay declares no client capabilities: a server's elicitation or sampling request (2025-11-25)
 * is refused at once with an error that says why, and a 2026-07-28 `input_required` result is a
 * failure that says so, never a wait.
 *
 * A kept connection listens for `notifications/tools/list_changed` (the session's GET stream on
 * 2025-11-25, a `subscriptions/listen` stream on 2026-07-28) when the server offers it, and tells
 * the listeners registered with `onToolsListChanged`.
 */
@Injectable()
export class McpUpstream implements OnModuleDestroy {
  private readonly agent: Agent;
  /** For the long-lived notification streams of kept connections: no idle limit on the body. */
  private readonly streamAgent: Agent;
  private readonly timeoutMs: number;
  private readonly connections: LRUCache<string, Connection>;
  private readonly listChangedListeners = new Set<ToolsListChangedListener>();
  /** The transports' fetch: over undici's request API (dispatcher-fetch.ts), one per agent. */
  private readonly callFetch: FetchLike;
  private readonly streamFetch: FetchLike;

  constructor(config: AppConfig) {
    this.timeoutMs = config.EXECUTION_TIMEOUT_MS;
    const connect = {
      timeout: config.EXECUTION_CONNECT_TIMEOUT_MS,
      ...(config.MCP_SERVERS_ALLOW_PRIVATE_NETWORKS ? {} : { lookup: publicOnlyLookup }),
    };
    this.agent = new Agent({
      connect,
      headersTimeout: config.EXECUTION_TIMEOUT_MS,
      bodyTimeout: config.EXECUTION_TIMEOUT_MS,
      maxResponseSize: config.EXECUTION_MAX_RESPONSE_BYTES,
    });
    this.streamAgent = new Agent({
      connect,
      headersTimeout: config.EXECUTION_TIMEOUT_MS,
      bodyTimeout: 0,
      maxResponseSize: config.EXECUTION_MAX_RESPONSE_BYTES,
    });
    this.callFetch = dispatcherFetch(this.agent, (url, init) => fetchThrough(this.agent, url, init));
    this.streamFetch = dispatcherFetch(this.streamAgent, (url, init) => fetchThrough(this.streamAgent, url, init));
    this.connections = new LRUCache<string, Connection>({
      max: MAX_CONNECTIONS,
      ttl: CONNECTION_IDLE_MS,
      updateAgeOnGet: true,
      dispose: (connection) => void connection.client.close().catch(() => undefined),
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.connections.clear();
    this.listChangedListeners.clear();
    await Promise.all([this.agent.destroy(), this.streamAgent.destroy()]);
  }

  /** Calls `listener` whenever a kept connection's server announces a change of its tools; answers how to stop. */
  onToolsListChanged(listener: ToolsListChangedListener): () => void {
    this.listChangedListeners.add(listener);
    return () => this.listChangedListeners.delete(listener);
  }

  /** The server's description, and every page of its tools handed to `onPage` as it comes. */
  async describe(
    endpoint: McpEndpoint,
    onPage: (tools: unknown[]) => Promise<void> | void,
  ): Promise<McpServerDescription> {
    const client = this.newClient();
    try {
      await this.guard(endpoint, () => client.connect(this.transport(endpoint), { timeout: this.timeoutMs }));
      let cursor: string | undefined;
      for (let page = 0; ; page += 1) {
        if (page >= MAX_TOOL_PAGES) {
          throw new McpUpstreamFailure(
            'protocol',
            `${origin(endpoint)} listed more than ${MAX_TOOL_PAGES} pages of tools`,
          );
        }
        // Read with a loose schema: the SDK's own would refuse the whole page for one malformed tool,
        // which the caller skips alone, with its reason.
        const result = await this.guard(endpoint, () =>
          client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, TOOLS_PAGE, {
            timeout: this.timeoutMs,
          }),
        );
        await onPage(result.tools);
        cursor = result.nextCursor;
        if (!cursor) {
          break;
        }
      }
      return {
        serverInfo: client.getServerVersion() ?? { name: origin(endpoint), version: '' },
        protocolVersion: client.getNegotiatedProtocolVersion(),
        instructions: client.getInstructions(),
      };
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  /**
   * `tools/call` on the server. A connection whose session the server has forgotten (404) is made
   * again and the call sent once more: the server never ran it.
   */
  async callTool(endpoint: McpEndpoint, tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const key = connectionKey(endpoint);
    for (let attempt = 0; ; attempt += 1) {
      const connection = this.connection(key, endpoint);
      try {
        await connection.ready;
        return await this.guard(endpoint, () =>
          connection.client.callTool(
            { name: tool, arguments: args },
            // The stored definition stands in for a tools/list round trip before the call.
            { timeout: this.timeoutMs, toolDefinition: { name: tool, inputSchema: { type: 'object' } } },
          ),
        );
      } catch (error) {
        this.connections.delete(key);
        if (attempt === 0 && error instanceof McpUpstreamFailure && error.kind === 'protocol' && isSessionGone(error)) {
          continue;
        }
        throw error;
      }
    }
  }

  /** A fetch bound like the MCP exchanges (size, time, public addresses), for OAuth discovery and registration. */
  readonly fetch = (url: string | URL, init?: RequestInit): Promise<Response> => fetchThrough(this.agent, url, init);

  private connection(key: string, endpoint: McpEndpoint): Connection {
    const known = this.connections.get(key);
    if (known) {
      return known;
    }
    const client = this.newClient(() => this.toolsChanged(endpoint));
    const ready = this.guard(endpoint, () =>
      client.connect(this.transport(endpoint, true), { timeout: this.timeoutMs }),
    );
    // A failed handshake is the caller's to see; the entry goes so the next call tries again.
    ready.catch(() => this.connections.delete(key));
    const connection = { client, ready };
    this.connections.set(key, connection);
    return connection;
  }

  /** A client; with `onToolsChanged`, one that listens for the server's tool-list changes when it offers them. */
  private newClient(onToolsChanged?: () => void): Client {
    const client = new Client(
      { name: 'patchbay', title: 'Patchbay', version: API_VERSION },
      {
        capabilities: {},
        versionNegotiation: { mode: 'auto' },
        inputRequired: { autoFulfill: false },
        ...(onToolsChanged
          ? {
              listChanged: {
                tools: { autoRefresh: false, debounceMs: LIST_CHANGED_DEBOUNCE_MS, onChanged: onToolsChanged },
              },
            }
          : {}),
      },
    );
    // No capabilities declared, and a request the client has no handler for is refused at once with
    // words a tool's author can act on (the SDK's own answer is a bare "method not found").
    client.fallbackRequestHandler = (request) =>
      Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          `Patchbay does not relay ${request.method}: it calls tools on behalf of an agent, with no user or model to ask during a call`,
        ),
      );
    return client;
  }

  private toolsChanged(endpoint: McpEndpoint): void {
    for (const listener of this.listChangedListeners) {
      listener(endpoint.server ?? endpoint.url, endpoint);
    }
  }

  /** `streams`: a kept connection, whose notification streams (a GET, or a subscriptions/listen POST) may stay open. */
  private transport(endpoint: McpEndpoint, streams = false): StreamableHTTPClientTransport {
    return new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: endpoint.headers },
      fetch: (url, init) => (streams && isStream(init) ? this.streamFetch : this.callFetch)(url, init),
    });
  }

  /** Runs one exchange with the server, its errors made McpUpstreamFailure with a message fit for the caller. */
  private async guard<T>(endpoint: McpEndpoint, exchange: () => Promise<T>): Promise<T> {
    try {
      return await exchange();
    } catch (error) {
      throw toFailure(endpoint, error);
    }
  }
}

/** undici's fetch through the given agent (its size limit and address check); Node's fetch types and undici's differ only in name. */
function fetchThrough(agent: Agent, url: string | URL, init: RequestInit | undefined): Promise<Response> {
  const options = { ...(init as UndiciRequestInit | undefined), dispatcher: agent };
  return undiciFetch(url, options);
}

function toFailure(endpoint: McpEndpoint, error: unknown): McpUpstreamFailure {
  if (error instanceof McpUpstreamFailure) {
    return error;
  }
  const server = origin(endpoint);
  if (error instanceof UnauthorizedError || (error instanceof SdkHttpError && error.status === 401)) {
    return new McpUpstreamFailure(
      'unauthorized',
      `The MCP server at ${server} refused the credentials (401): the account may need to be linked again`,
    );
  }
  if (error instanceof SdkHttpError) {
    return new McpUpstreamFailure('protocol', `The MCP server at ${server} answered HTTP ${error.status}`);
  }
  const cause = causeCode(error);
  if (cause === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
    return new McpUpstreamFailure('too_large', `The MCP server at ${server} answered more than the size limit`);
  }
  if (cause === 'ENONPUBLIC') {
    return new McpUpstreamFailure('unreachable', `The MCP server at ${server} is on a private or loopback address`);
  }
  if (cause !== undefined) {
    return new McpUpstreamFailure('unreachable', `Cannot reach the MCP server at ${server} (${cause})`);
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) {
      return new McpUpstreamFailure('timeout', `Timeout: the MCP server at ${server} did not answer in time`);
    }
    if (error.code === SdkErrorCode.UnsupportedResultType || error.code === SdkErrorCode.InputRequiredRoundsExceeded) {
      return new McpUpstreamFailure(
        'input_required',
        `The MCP server at ${server} asked for the user's input during the call, which Patchbay does not relay`,
      );
    }
    if (error.code === SdkErrorCode.ClientHttpAuthentication) {
      return new McpUpstreamFailure(
        'unauthorized',
        `The MCP server at ${server} refused the credentials (401): the account may need to be linked again`,
      );
    }
    return new McpUpstreamFailure('protocol', `The MCP server at ${server} failed: ${error.message.slice(0, 300)}`);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new McpUpstreamFailure('protocol', `The MCP server at ${server} failed: ${message.slice(0, 300)}`);
}

/** The first `code` along an error's causes (undici wraps socket errors in `TypeError: fetch failed`). */
function causeCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && !Object.values(SdkErrorCode).includes(code as SdkErrorCode)) {
      return code;
    }
    current = current.cause;
  }
  return undefined;
}

/** A request whose answer is a stream of notifications meant to stay open: the session's GET, or subscriptions/listen. */
function isStream(init: RequestInit | undefined): boolean {
  if ((init?.method ?? 'GET').toUpperCase() === 'GET') {
    return true;
  }
  return typeof init?.body === 'string' && init.body.includes('"subscriptions/listen"');
}

function isSessionGone(failure: McpUpstreamFailure): boolean {
  return failure.message.endsWith('HTTP 404');
}

/** The server named by its origin: a path or query string may carry a credential. */
function origin(endpoint: McpEndpoint): string {
  return new URL(endpoint.url).origin;
}

/** One key per server and credentials; the credentials only as a digest. */
function connectionKey(endpoint: McpEndpoint): string {
  const headers = Object.entries(endpoint.headers).sort(([a], [b]) => a.localeCompare(b));
  return createHash('sha256')
    .update(JSON.stringify([endpoint.url, headers]))
    .digest('base64url');
}
