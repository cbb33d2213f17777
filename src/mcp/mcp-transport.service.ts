import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BeforeApplicationShutdown, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import {
  classifyInboundRequest,
  createMcpHandler,
  LATEST_PROTOCOL_VERSION,
  type McpHttpHandler,
  Server,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkInputLimits } from '../../libs/common/src/index.js';
import { Metrics } from '../observability/metrics.js';
import { RateLimitsService } from '../rate-limits/rate-limits.service.js';
import { AppConfig } from '../config/app-config.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import type { McpCallContext } from './mcp-call-context.js';
import { McpOriginNotAllowedError, McpSessionNotFoundError } from './mcp.errors.js';
import { McpRepository } from './mcp.repository.js';
import { patchbayServer } from './mcp-server.js';
import {
  answeredLink,
  callContext,
  envelopeCapabilities,
  guarded,
  header,
  initializeParams,
  TransportRefusal,
} from './mcp-request.js';
import type { McpSessionEntity } from './mcp-session.entity.js';
import { type McpPrincipal, McpTokensService } from './mcp-tokens.service.js';
import { McpToolsService } from './mcp-tools.service.js';
import { type ExchangeScope, ToolChangeBus } from './tool-change-bus.js';
import { serveWebExchange } from './web-exchange.js';

/** Request bodies larger than this are refused (413) before anything else is done with them. */
export const MCP_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
const SESSION_HEADER = 'mcp-session-id';
/** How long a session lasts; then requests with its id get 404 and the client initialises again (as the spec says). */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The revision served per request, without initialize or sessions. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** A session's standalone GET stream held open on this instance (2025-11-25), for notifications. */
interface HeldStream {
  sessionId: string;
  principal: McpPrincipal;
  ctx: McpCallContext;
  server: Server;
}

/**
 * Streamable HTTP at /v1/mcp, both protocol eras on one URL, on the v2 server SDK. Credentials are
 * resolved first, the same way for both (`admit`); then the SDK's own classifier routes the request:
 *
 * - 2026-07-28 (a per-request `_meta` envelope): the SDK's `createMcpHandler`, a fresh `Server` per
 *   request; `server/discover`, the Mcp-Method/Mcp-Name checks, input-required results and
 *   `subscriptions/listen` streams (fed by ChangeNotifications through the project-scoped bus).
 * - 2025-11-25 and before: a fresh `Server` and a stateless transport per request; what a session
 *   must remember (negotiated version, client capabilities) is in the database, keyed by the
 *   `Mcp-Session-Id` handed out at `initialize`, so any instance serves any request. A client that
 *   sends no session id is served statelessly.
 */
@Injectable()
export class McpTransportService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly allowedOrigins: Set<string>;
  private readonly streams = new Set<HeldStream>();
  private readonly unsubscribe: (() => void)[] = [];
  /**
   * One validator for every per-request Server: the SDK would build a new Ajv for each (about 2.5 ms
   * of CPU, measured with bench/mcp.ts), and it is only used for form elicitation schemas.
   */
  private readonly validator = new AjvJsonSchemaValidator();
  private readonly bus = new ToolChangeBus();
  private readonly modern: McpHttpHandler;
  private readonly serveModern: (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>;
  private readonly logger = new Logger('McpTransport');

  constructor(
    private readonly tokens: McpTokensService,
    private readonly tools: McpToolsService,
    private readonly repository: McpRepository,
    private readonly config: AppConfig,
    private readonly changes: ChangeNotifications,
    private readonly limits: RateLimitsService,
    private readonly metrics: Metrics,
  ) {
    this.allowedOrigins = new Set([new URL(config.publicBaseUrl).origin]);
    for (const entry of (config.MCP_ALLOWED_ORIGINS ?? '').split(',')) {
      if (entry.trim()) {
        this.allowedOrigins.add(entry.trim().replace(/\/+$/, ''));
      }
    }
    // 2025-era traffic never reaches this handler (handlePost routes it first), hence 'reject'.
    this.modern = createMcpHandler(
      () => {
        const scope = this.bus.exchanges.getStore();
        if (!scope) {
          throw new Error('A 2026-07-28 exchange outside the transport');
        }
        return patchbayServer(scope.ctx, this.tools, this.validator);
      },
      {
        legacy: 'reject',
        bus: this.bus,
        maxRequestBodySize: MCP_BODY_LIMIT_BYTES,
        onerror: (error) => this.logger.debug(`MCP 2026-07-28: ${error.message}`),
      },
    );
    this.serveModern = (req, res, body) => serveWebExchange(this.modern, req, res, body);
  }

  onModuleInit(): void {
    const onChange = (projectId: string | undefined) => void this.toolsChanged(projectId);
    this.unsubscribe.push(this.changes.subscribe('app_configurations', onChange));
    this.unsubscribe.push(this.changes.subscribe('functions', onChange));
  }

  /** Held streams end before the HTTP server closes, which would otherwise wait for them. */
  async beforeApplicationShutdown(): Promise<void> {
    for (const stop of this.unsubscribe.splice(0)) {
      stop();
    }
    await this.modern.close();
    for (const scope of this.bus.open()) {
      scope.end();
    }
    await Promise.all([...this.streams].map((stream) => stream.server.close()));
    this.streams.clear();
  }

  async handlePost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await guarded(reply, async () => {
      this.checkSize(request);
      if (this.metrics.enabled) {
        for (const message of [request.body].flat()) {
          const method = (message as { method?: unknown } | null)?.method;
          this.metrics.mcpRequest(typeof method === 'string' ? method : 'response');
        }
      }
      const principal = await this.admit(request, reply);
      const route = classifyInboundRequest({
        httpMethod: 'POST',
        protocolVersionHeader: header(request, 'mcp-protocol-version'),
        mcpMethodHeader: header(request, 'mcp-method'),
        mcpNameHeader: header(request, 'mcp-name'),
        body: request.body,
      });
      if (route.kind !== 'legacy') {
        // 2026-07-28, or the SDK's own answer to a malformed envelope: the SDK handler serves both.
        const ctx = callContext(request, principal, 'modern');
        const capabilities = envelopeCapabilities(request.body);
        ctx.urlElicitation = Boolean((capabilities?.elicitation as { url?: unknown } | undefined)?.url);
        ctx.linkAnswered = answeredLink(request.body);
        await this.exchange(request, reply, ctx);
        return;
      }
      const ctx = callContext(request, principal, 'legacy');
      const sessionId = header(request, SESSION_HEADER);
      if (sessionId !== undefined) {
        const session = await this.session(sessionId, principal);
        ctx.urlElicitation = Boolean((session.client_capabilities.elicitation as { url?: unknown } | undefined)?.url);
      } else {
        const initialize = initializeParams(request.body);
        if (initialize) {
          const id = randomUUID();
          await this.repository.insertSession(
            {
              id,
              project_id: principal.projectId,
              mcp_token_id: principal.tokenId,
              protocol_version: SUPPORTED_PROTOCOL_VERSIONS.includes(initialize.protocolVersion)
                ? initialize.protocolVersion
                : LATEST_PROTOCOL_VERSION,
              client_capabilities: initialize.capabilities,
            },
            new Date(Date.now() - SESSION_TTL_MS),
          );
          reply.raw.setHeader('Mcp-Session-Id', id);
        }
      }
      await this.serve(request, reply, ctx);
    });
  }

  /**
   * Opens the standalone SSE stream of a 2025-11-25 session (GET with its Mcp-Session-Id and the
   * same credentials), on which `notifications/tools/list_changed` arrives when the project's
   * configurations change, on this instance or another. Without a session there is nothing to
   * deliver to: 405, as the transport specification allows. (2026-07-28 clients use
   * `subscriptions/listen` instead.)
   */
  async handleGet(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await guarded(reply, async () => {
      // Credentials first: without them nothing but 401 is answered.
      const principal = await this.admit(request, reply);
      const sessionId = header(request, SESSION_HEADER);
      if (sessionId === undefined) {
        throw new TransportRefusal(405, 'Method Not Allowed: GET needs the Mcp-Session-Id of a session', {
          allow: 'POST, DELETE',
        });
      }
      const ctx = callContext(request, principal, 'legacy');
      await this.session(sessionId, principal);
      const server = patchbayServer(ctx, this.tools, this.validator);
      const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await server.connect(transport);
      const held: HeldStream = { sessionId, principal, ctx, server };
      this.streams.add(held);
      void reply.hijack();
      reply.raw.setHeader('x-request-id', request.id);
      reply.raw.setHeader('mcp-session-id', sessionId);
      reply.raw.on('close', () => {
        this.streams.delete(held);
        void server.close();
      });
      await transport.handleRequest(request.raw, reply.raw);
    });
  }

  /**
   * Tells the open streams of `projectId` (of every project when undefined) that their tool list
   * changed: 2025-11-25 sessions' GET streams and 2026-07-28 `subscriptions/listen` streams. Only
   * direct mode's list depends on configurations (unified mode's three tools never change). A stream
   * whose session has ended or whose token was revoked (maybe on another instance) is closed instead.
   */
  private async toolsChanged(projectId: string | undefined): Promise<void> {
    const affected = (ctx: McpCallContext) =>
      ctx.mode === 'direct' && (projectId === undefined || ctx.projectId === projectId);
    const now = new Date();
    const startedAfter = new Date(Date.now() - SESSION_TTL_MS);
    const modern = this.bus.open().filter((scope) => affected(scope.ctx));
    await Promise.all([
      ...modern.map(async (scope) => {
        if (scope.ctx.tokenId !== null && !(await this.repository.isTokenUsable(scope.ctx.tokenId, now))) {
          scope.end();
          return;
        }
        this.bus.publishTo((ctx) => ctx === scope.ctx, { kind: 'tools_list_changed' });
      }),
      ...[...this.streams]
        .filter((held) => affected(held.ctx))
        .map(async (held) => {
          const { sessionId, principal, server } = held;
          const alive = await this.repository.findSession(
            sessionId,
            principal.projectId,
            principal.tokenId,
            startedAfter,
          );
          if (!alive) {
            this.streams.delete(held);
            await server.close();
            return;
          }
          await server.sendToolListChanged();
        }),
    ]).catch((error: unknown) => this.logger.warn(`Cannot send tools/list_changed: ${String(error)}`));
  }

  /** Ends a 2025-11-25 session (its row goes; later requests with its id get 404). */
  async handleDelete(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await guarded(reply, async () => {
      const principal = await this.admit(request, reply);
      const sessionId = header(request, SESSION_HEADER);
      if (sessionId === undefined) {
        throw new TransportRefusal(400, 'Bad Request: Mcp-Session-Id header is required');
      }
      const deleted =
        UUID.test(sessionId) &&
        (await this.repository.deleteSession(sessionId, principal.projectId, principal.tokenId));
      if (!deleted) {
        throw new McpSessionNotFoundError();
      }
      for (const held of this.streams) {
        if (held.sessionId === sessionId) {
          this.streams.delete(held);
          await held.server.close();
        }
      }
      await reply.code(200).send();
    });
  }

  /** A 2025-era request: a fresh server and a stateless transport (JSON responses). */
  private async serve(request: FastifyRequest, reply: FastifyReply, ctx: McpCallContext): Promise<void> {
    const server = patchbayServer(ctx, this.tools, this.validator);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    void reply.hijack();
    reply.raw.setHeader('x-request-id', request.id);
    reply.raw.on('close', () => {
      void server.close();
    });
    await transport.handleRequest(request.raw, reply.raw, request.body);
  }

  /**
   * A 2026-07-28 exchange through the SDK's handler, run inside the caller's scope: the server
   * factory reads the caller from it, and a `subscriptions/listen` stream opened by it is filed
   * under that caller (see ToolChangeBus).
   */
  private async exchange(request: FastifyRequest, reply: FastifyReply, ctx: McpCallContext): Promise<void> {
    void reply.hijack();
    reply.raw.setHeader('x-request-id', request.id);
    const scope: ExchangeScope = { ctx, end: () => reply.raw.destroy() };
    await this.bus.exchanges.run(scope, () => this.serveModern(request.raw, reply.raw, request.body));
  }

  /** Origin, then credentials; what fails is answered with its status and a JSON-RPC error. */
  private async admit(request: FastifyRequest, reply: FastifyReply): Promise<McpPrincipal> {
    const origin = header(request, 'origin');
    if (origin !== undefined && !this.allowedOrigins.has(origin)) {
      throw new McpOriginNotAllowedError(origin);
    }
    const principal = await this.limits.authenticateFrom(request.ip, () =>
      // The input limits once the credential is valid (the routes leave them out of the global guard).
      this.tokens.authenticate(header(request, 'x-api-key'), header(request, 'authorization'), request.url, () =>
        checkInputLimits(request),
      ),
    );
    // The credential's one budget, whether it calls REST or MCP.
    const limits = await this.limits.spendRequest(
      principal.tokenId ? `mcp:${principal.tokenId}` : `key:${principal.apiKeyId}`,
    );
    for (const [name, value] of Object.entries(limits ?? {})) {
      reply.raw.setHeader(name, value);
    }
    return principal;
  }

  private checkSize(request: FastifyRequest): void {
    const length = Number(header(request, 'content-length') ?? 0);
    if (length > MCP_BODY_LIMIT_BYTES) {
      throw new TransportRefusal(413, `Payload too large: request bodies are limited to ${MCP_BODY_LIMIT_BYTES} bytes`);
    }
  }

  private async session(id: string, principal: McpPrincipal): Promise<McpSessionEntity> {
    const session = UUID.test(id)
      ? await this.repository.findSession(
          id,
          principal.projectId,
          principal.tokenId,
          new Date(Date.now() - SESSION_TTL_MS),
        )
      : null;
    if (!session) {
      throw new McpSessionNotFoundError();
    }
    return session;
  }
}
