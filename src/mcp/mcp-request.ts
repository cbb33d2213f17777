import type { FastifyReply, FastifyRequest } from 'fastify';
import { CLIENT_CAPABILITIES_META_KEY, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { DomainError } from '../../libs/common/src/index.js';
import { apiKeyActor, mcpTokenActor } from '../audit/actor.js';
import { OWNER_ID_MAX_LENGTH as OWNER_ID_MAX } from '../linked-accounts/owner-id.js';
import { intersect, LINK_INPUT_KEY, type McpCallContext, type McpEra } from './mcp-call-context.js';
import { McpOwnerOverrideError } from './mcp.errors.js';
import type { McpPrincipal } from './mcp-tokens.service.js';

// Reading an MCP HTTP request (its headers, query and JSON-RPC body) and answering a refusal before MCP
// itself is reached: what the transport needs of a request, apart from the state it keeps.

/** A refusal before MCP itself is reached, answered as a JSON-RPC error with an HTTP status. */
export class TransportRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * Who calls and for whom, from the request and its credential: the end user (X-Linked-Account-Owner-Id or
 * `linked_account_owner_id`, never another than an owner-scoped token's), the mode and the apps reached.
 */
export function callContext(request: FastifyRequest, principal: McpPrincipal, era: McpEra): McpCallContext {
  const query = request.query as Record<string, string | string[] | undefined>;
  const given = header(request, 'x-linked-account-owner-id') ?? single(query.linked_account_owner_id);
  if (given !== undefined && (given === '' || given.length > OWNER_ID_MAX)) {
    throw new TransportRefusal(400, `Invalid linked_account_owner_id: 1 to ${OWNER_ID_MAX} characters`);
  }
  if (principal.tokenOwnerId !== null && given !== undefined && given !== principal.tokenOwnerId) {
    throw new McpOwnerOverrideError();
  }
  const mode = single(query.mode) ?? 'unified';
  if (mode !== 'unified' && mode !== 'direct') {
    throw new TransportRefusal(400, `Invalid mode ${JSON.stringify(mode)}: use unified or direct`);
  }
  const appsParam = query.apps === undefined ? null : [query.apps].flat().flatMap((value) => value.split(','));
  const requested = appsParam === null ? null : appsParam.map((app) => app.trim()).filter(Boolean);
  return {
    projectId: principal.projectId,
    ownerId: principal.tokenOwnerId ?? given ?? null,
    tokenId: principal.tokenId,
    actor: principal.tokenId !== null ? mcpTokenActor(principal.tokenId) : apiKeyActor(principal.apiKeyId ?? ''),
    mode: mode,
    apps: intersect(requested, principal.tokenApps),
    era,
    urlElicitation: false,
    linkAnswered: false,
  };
}

/**
 * Runs `work`; a refusal it throws before anything was sent (a TransportRefusal or a domain error) is answered
 * with its status and a JSON-RPC error. Anything else, or anything once the answer has begun, goes on up.
 */
export async function guarded(reply: FastifyReply, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (reply.sent || reply.raw.headersSent) {
      throw error;
    }
    if (error instanceof TransportRefusal) {
      await refuse(reply, error.status, error.message, error.headers);
    } else if (error instanceof DomainError) {
      const headers: Record<string, string> = {
        ...(error.status === 401 ? { 'www-authenticate': 'Bearer realm="patchbay", resource="/v1/mcp"' } : {}),
        ...error.headers,
      };
      await refuse(reply, error.status, error.message, headers);
    } else {
      throw error;
    }
  }
}

async function refuse(reply: FastifyReply, status: number, message: string, headers: Record<string, string>) {
  const code = status === 401 || status === 403 ? -32001 : status === 404 ? -32001 : ProtocolErrorCode.InvalidRequest;
  await reply
    .code(status)
    .headers({ ...headers, 'content-type': 'application/json' })
    .send({ jsonrpc: '2.0', error: { code, message }, id: null });
}

export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The params of an `initialize` request in a body (alone or in a batch). */
export function initializeParams(
  body: unknown,
): { protocolVersion: string; capabilities: Record<string, unknown> } | null {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  for (const message of messages) {
    const candidate = message as { method?: unknown; params?: { protocolVersion?: unknown; capabilities?: unknown } };
    if (candidate?.method === 'initialize' && typeof candidate.params?.protocolVersion === 'string') {
      const capabilities = candidate.params.capabilities;
      return {
        protocolVersion: candidate.params.protocolVersion,
        capabilities:
          typeof capabilities === 'object' && capabilities !== null ? (capabilities as Record<string, unknown>) : {},
      };
    }
  }
  return null;
}

/** The client capabilities a 2026-07-28 request carries in its `_meta` envelope. */
export function envelopeCapabilities(body: unknown): Record<string, unknown> | undefined {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const capabilities = meta?.[CLIENT_CAPABILITIES_META_KEY];
  return typeof capabilities === 'object' && capabilities !== null
    ? (capabilities as Record<string, unknown>)
    : undefined;
}

/** Whether a retried 2026-07-28 tools/call answers the link request of an earlier round. */
export function answeredLink(body: unknown): boolean {
  const responses = (body as { params?: { inputResponses?: Record<string, unknown> } } | null)?.params?.inputResponses;
  return typeof responses === 'object' && responses !== null && LINK_INPUT_KEY in responses;
}
