import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server as LegacyServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  createMcpHandler,
  InMemoryServerEventBus,
  inputRequired,
  Server as ModernServer,
} from '@modelcontextprotocol/server';

export interface TestTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  title?: string;
}

export interface TestToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What a tool call sees: the end user the bearer token stands for (the server's own accounts). */
export interface TestCallContext {
  user: string | undefined;
  /**
   * Asks the client for the user's input or a model's answer during the call: a server-to-client
   * request on 2025-11-25 (resolves with the client's answer, rejects with its error); on
   * 2026-07-28 the `input_required` result the tool returns instead.
   */
  ask: (kind: 'elicitation' | 'sampling') => Promise<unknown>;
}

export interface McpTestServerOptions {
  /** `modern`: the v2 SDK's handler (2026-07-28, with its stateless 2025 fallback); `legacy`: the v1 SDK with sessions (2025-11-25 only). */
  era: 'modern' | 'legacy';
  tools: () => TestTool[];
  call: (name: string, args: Record<string, unknown>, ctx: TestCallContext) => Promise<TestToolResult> | TestToolResult;
  /** Bearer tokens this server accepts, each naming its user; absent: no authentication. */
  tokens?: () => Map<string, string>;
  /**
   * OAuth 2.0 protection as the MCP authorization specification has it: protected resource metadata
   * (RFC 9728) naming `issuer`, 401 with its address, and tokens checked by `verify` (the user, or undefined).
   */
  oauth?: {
    issuer: string;
    scopes: string[];
    verify: (token: string, resource: string) => Promise<string | undefined>;
  };
  /** Tools a tools/list page holds (cursor paging). */
  pageSize?: number;
  /** Only a request with this header and value is served (an API-key server). */
  apiKey?: { header: string; value: string };
  /** Declares `tools.listChanged`: `announceToolsChanged()` then tells the connected clients. */
  listChanged?: boolean;
  /** Legacy: answer POSTs with an SSE stream (what lets a tool send requests to the client mid-call). */
  sse?: boolean;
}

const ELICITATION = {
  message: 'Which account should the note go to?',
  requestedSchema: { type: 'object' as const, properties: { account: { type: 'string' as const } } },
};
const SAMPLING = {
  messages: [{ role: 'user' as const, content: { type: 'text' as const, text: 'Summarise my notes.' } }],
  maxTokens: 100,
};

interface Received {
  method: string;
  headers: IncomingMessage['headers'];
  rpc?: string;
}

/**
 * A real MCP server on 127.0.0.1 for tests, built with the official SDKs: tools from `tools()`,
 * results from `call`, optional bearer-token or API-key authentication, and a record of every
 * HTTP request it received.
 */
export class McpTestServer {
  readonly received: Received[] = [];
  /** Legacy sessions by id; cleared by `forgetSessions` to act as a server that lost them. */
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  /** The legacy server of each session, to send it notifications. */
  private readonly legacyServers = new Map<string, LegacyServer>();
  /** Modern: the events every per-request handler's subscriptions/listen streams hear. */
  private readonly bus = new InMemoryServerEventBus();
  private constructor(
    private readonly http: HttpServer,
    readonly url: string,
  ) {}

  static async start(options: McpTestServerOptions): Promise<McpTestServer> {
    const holder: { server?: McpTestServer } = {};
    const http = createServer((req, res) => {
      void holder.server!.serve(options, req, res).catch((error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500).end(String(error));
        }
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as AddressInfo;
    holder.server = new McpTestServer(http, `http://127.0.0.1:${port}/mcp`);
    return holder.server;
  }

  forgetSessions(): void {
    this.sessions.clear();
    this.legacyServers.clear();
  }

  /** `notifications/tools/list_changed` to every client listening: sessions' GET streams, subscriptions/listen streams. */
  async announceToolsChanged(): Promise<void> {
    this.bus.publish({ kind: 'tools_list_changed' });
    await Promise.all([...this.legacyServers.values()].map((server) => server.sendToolListChanged()));
  }

  calls(): Received[] {
    return this.received.filter((r) => r.rpc === 'tools/call');
  }

  async close(): Promise<void> {
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private async serve(options: McpTestServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (options.oauth && req.url?.startsWith('/.well-known/oauth-protected-resource')) {
      const metadata = {
        resource: this.url,
        authorization_servers: [options.oauth.issuer],
        scopes_supported: options.oauth.scopes,
        bearer_methods_supported: ['header'],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(metadata));
      return;
    }
    const body = await readBody(req);
    const parsed = body.length > 0 ? (JSON.parse(body.toString('utf8')) as { method?: string }) : undefined;
    this.received.push({ method: req.method ?? '', headers: req.headers, rpc: parsed?.method });
    let user: string | undefined;
    if (options.tokens) {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      user = token === undefined ? undefined : options.tokens().get(token);
      if (!user) {
        res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
        return;
      }
    }
    if (options.apiKey && req.headers[options.apiKey.header.toLowerCase()] !== options.apiKey.value) {
      res.writeHead(401).end();
      return;
    }
    if (options.oauth) {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      user = token === undefined ? undefined : await options.oauth.verify(token, this.url);
      if (!user) {
        const metadata = new URL('/.well-known/oauth-protected-resource/mcp', this.url).href;
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${metadata}"` }).end();
        return;
      }
    }
    const ctx = { user };
    if (options.era === 'modern') {
      await this.serveModern(options, ctx, req, body, res);
    } else {
      await this.serveLegacy(options, ctx, req, parsed, res);
    }
  }

  private async serveModern(
    options: McpTestServerOptions,
    caller: { user: string | undefined },
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
  ): Promise<void> {
    const handler = createMcpHandler(
      () => {
        const server = new ModernServer(
          { name: 'test-modern', version: '2.0.0' },
          { capabilities: { tools: { listChanged: options.listChanged ?? false } } },
        );
        server.setRequestHandler('tools/list', (request) => listPage(options, request.params?.cursor));
        server.setRequestHandler('tools/call', async (request) => {
          const asked: { result?: unknown } = {};
          const ctx: TestCallContext = {
            ...caller,
            ask: (kind) => {
              asked.result = inputRequired({
                inputRequests: {
                  answer:
                    kind === 'elicitation' ? inputRequired.elicit(ELICITATION) : inputRequired.createMessage(SAMPLING),
                },
              });
              return new Promise<never>(() => undefined);
            },
          };
          // A tool that asks is answered `input_required` at once (2026-07-28 has no requests to the client).
          const called = Promise.resolve(options.call(request.params.name, request.params.arguments ?? {}, ctx));
          const result = await Promise.race([called, new Promise((resolve) => setImmediate(resolve))]);
          return (asked.result ?? result ?? (await called)) as never;
        });
        return server;
      },
      { bus: this.bus },
    );
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') {
        headers.set(name, value);
      }
    }
    const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    // Streamed as it comes: a subscriptions/listen answer stays open.
    if (response.body) {
      for await (const chunk of response.body) {
        res.write(chunk);
      }
    }
    res.end();
  }

  private async serveLegacy(
    options: McpTestServerOptions,
    caller: { user: string | undefined },
    req: IncomingMessage,
    parsed: unknown,
    res: ServerResponse,
  ): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const transport = this.sessions.get(sessionId);
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handleRequest(req, res, parsed);
      return;
    }
    const server = new LegacyServer(
      { name: 'test-legacy', version: '1.0.0' },
      { capabilities: { tools: { listChanged: options.listChanged ?? false } } },
    );
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: !options.sse,
      onsessioninitialized: (id) => {
        this.sessions.set(id, transport);
        this.legacyServers.set(id, server);
      },
    });
    server.setRequestHandler(ListToolsRequestSchema, (request) => listPage(options, request.params?.cursor));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      // Sent as is, whatever the client declared: a server may ask a client that never offered it.
      const ctx: TestCallContext = {
        ...caller,
        ask: (kind) =>
          kind === 'elicitation'
            ? extra.sendRequest({ method: 'elicitation/create', params: ELICITATION }, ElicitResultSchema)
            : extra.sendRequest({ method: 'sampling/createMessage', params: SAMPLING }, CreateMessageResultSchema),
      };
      return { ...(await options.call(request.params.name, request.params.arguments ?? {}, ctx)) };
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, parsed);
  }
}

function listPage(options: McpTestServerOptions, cursor: string | undefined) {
  const tools = options.tools();
  const size = options.pageSize ?? 100;
  const start = cursor ? Number(cursor) : 0;
  const page = tools.slice(start, start + size);
  const next = start + size < tools.length ? String(start + size) : undefined;
  return { tools: page as never[], ...(next ? { nextCursor: next } : {}) };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
