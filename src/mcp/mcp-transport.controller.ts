import { applyDecorators, Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import {
  ApiExtraModels,
  getSchemaPath,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorResponse, InputLimitsCheckedByHandler } from '../../libs/common/src/index.js';
import { API_KEY_HEADER, PublicRoute } from '../projects/api-key.guard.js';
import { JsonRpcErrorResponse } from './mcp.dto.js';
import { McpTransportService } from './mcp-transport.service.js';

/** The HTTP-level refusals of /v1/mcp (the transport's and Patchbay's checks), all JSON-RPC errors. */
function JsonRpcRefusals(statuses: Record<number, string>): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(JsonRpcErrorResponse),
    ...Object.entries(statuses).map(([status, description]) =>
      ApiResponse({ status: Number(status), description, type: JsonRpcErrorResponse }),
    ),
  );
}

/**
 * A project's address answers 404 as JSON-RPC for an unknown session, and as the API's plain error when the
 * address itself names no project (`/v1/mcp/p/` matches no route).
 */
function ProjectAddressNotFound(): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(JsonRpcErrorResponse, ErrorResponse),
    ApiResponse({
      status: 404,
      description: 'An unknown or ended session (JSON-RPC), or an address without a project (the API error)',
      schema: { oneOf: [{ $ref: getSchemaPath(JsonRpcErrorResponse) }, { $ref: getSchemaPath(ErrorResponse) }] },
    }),
  );
}

const REFUSALS = {
  400: 'Malformed JSON-RPC, a missing Mcp-Session-Id where one is needed, an invalid owner or mode, or 2026-07-28 headers that disagree with the body',
  401: 'Missing or wrong credentials (with WWW-Authenticate)',
  403: 'A browser Origin that is not allowed, or a token used for another owner',
  404: 'An unknown or ended session',
  406: 'The Accept header does not allow application/json and text/event-stream',
  413: 'A body over 4 MiB',
  415: 'A body that is not application/json',
};

function withoutNotFound(statuses: Record<number, string>): Record<number, string> {
  return Object.fromEntries(Object.entries(statuses).filter(([status]) => status !== '404'));
}

/**
 * The MCP endpoint (Streamable HTTP). Its own credential check (API key or MCP token, answered as
 * JSON-RPC errors) replaces the global guard; the SDK transport writes the responses.
 */
@ApiTags('mcp')
@InputLimitsCheckedByHandler()
@Controller('v1/mcp')
export class McpTransportController {
  constructor(private readonly transport: McpTransportService) {}

  @Post()
  @PublicRoute()
  @ApiSecurity(API_KEY_HEADER)
  @ApiOperation({
    summary: 'Model Context Protocol endpoint (Streamable HTTP)',
    description:
      'JSON-RPC messages of the Model Context Protocol, for MCP clients rather than direct use. Revision ' +
      '2026-07-28 when a request carries the per-request _meta envelope (with the MCP-Protocol-Version, ' +
      'Mcp-Method and Mcp-Name headers; server/discover, subscriptions/listen), else 2025-11-25 and the ' +
      'versions it negotiates at initialize (with an Mcp-Session-Id session). Credentials: X-API-KEY or `Authorization: Bearer` with the API key or an ' +
      'owner-scoped MCP token (POST /v1/mcp/tokens). With an API key the end user is named by the ' +
      'X-Linked-Account-Owner-Id header or the `linked_account_owner_id` query parameter. Query: ' +
      '`mode=unified` (default: search_functions, get_function_definition, execute_function) or `mode=direct` ' +
      '(one tool per enabled function), `apps=A,B`. Missing or wrong credentials: 401 with a JSON-RPC error ' +
      'and WWW-Authenticate; a browser Origin other than the service or MCP_ALLOWED_ORIGINS: 403; bodies over ' +
      '4 MiB: 413.',
  })
  @ApiOkResponse({ description: 'A JSON-RPC response (or 202 for notifications)' })
  @ApiResponse({ status: 202, description: 'Accepted notifications or responses' })
  @JsonRpcRefusals(REFUSALS)
  handleMcpPost(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.transport.handlePost(request, reply);
  }

  @Get()
  @PublicRoute()
  @ApiSecurity(API_KEY_HEADER)
  @ApiOperation({
    summary: 'Open the server-to-client stream of an MCP session (2025-11-25)',
    description:
      'A Server-Sent Events stream for the session named by the Mcp-Session-Id header (same credentials as ' +
      'POST /v1/mcp), on which notifications/tools/list_changed arrives when the tool list of a direct-mode ' +
      'session changes (an app configuration of the project created, changed or deleted, on any instance). ' +
      '405 with Allow: POST, DELETE without a session. Revision 2026-07-28 clients POST subscriptions/listen ' +
      'instead.',
  })
  @ApiOkResponse({ description: 'A text/event-stream of JSON-RPC notifications' })
  @JsonRpcRefusals({
    400: 'An invalid owner or mode',
    401: REFUSALS[401],
    403: REFUSALS[403],
    404: REFUSALS[404],
    405: 'No Mcp-Session-Id: there is no stream without a session',
    406: 'The Accept header does not allow text/event-stream',
  })
  handleMcpGet(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.transport.handleGet(request, reply);
  }

  @Delete()
  @PublicRoute()
  @ApiSecurity(API_KEY_HEADER)
  @ApiOperation({
    summary: 'End an MCP session (2025-11-25)',
    description:
      'Ends the session named by the Mcp-Session-Id header (same credentials as POST /v1/mcp); later requests ' +
      'with that id are answered 404. 400 without the header.',
  })
  @ApiOkResponse({ description: 'The session ended' })
  @JsonRpcRefusals({ 400: REFUSALS[400], 401: REFUSALS[401], 403: REFUSALS[403], 404: REFUSALS[404] })
  handleMcpDelete(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.transport.handleDelete(request, reply);
  }

  /**
   * A project's own MCP address, which MCP clients add by URL and sign users in to by OAuth 2.1
   * (src/mcp-oauth); the same transport, and also the project's API key and MCP tokens.
   */
  @Post('p/:projectId')
  @PublicRoute()
  @ApiSecurity(API_KEY_HEADER)
  @ApiParam({
    name: 'projectId',
    type: String,
    format: 'uuid',
    description: 'The project (its address identifies it to OAuth clients)',
  })
  @ApiOperation({
    summary: "Model Context Protocol endpoint at a project's own address (OAuth 2.1)",
    description:
      'The same as POST /v1/mcp, at the address MCP clients (Claude, ChatGPT, VS Code, Cursor…) add by URL: ' +
      'it is an OAuth 2.1 protected resource whose metadata (/.well-known/oauth-protected-resource/v1/mcp/p/' +
      "{projectId}) leads to the project's authorization server and identity provider (PUT " +
      "/v1/mcp/identity-provider). Also accepts the project's API key and MCP tokens. Without credentials: 401 " +
      'with `WWW-Authenticate: Bearer resource_metadata="…"`.',
  })
  @ApiOkResponse({ description: 'A JSON-RPC response (or 202 for notifications)' })
  @ApiResponse({ status: 202, description: 'Accepted notifications or responses' })
  @JsonRpcRefusals(withoutNotFound(REFUSALS))
  @ProjectAddressNotFound()
  handleProjectMcpPost(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.transport.handlePost(request, reply);
  }

  @Get('p/:projectId')
  @PublicRoute()
  @ApiSecurity(API_KEY_HEADER)
  @ApiParam({ name: 'projectId', type: String, format: 'uuid' })
  @ApiOperation({ summary: "Open the server-to-client stream of an MCP session, at a project's own address" })
  @ApiOkResponse({ description: 'A text/event-stream of JSON-RPC notifications' })
  @JsonRpcRefusals({ 401: REFUSALS[401], 403: REFUSALS[403], 405: 'No Mcp-Session-Id' })
  @ProjectAddressNotFound()
  handleProjectMcpGet(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.transport.handleGet(request, reply);
  }

  @Delete('p/:projectId')
  @PublicRoute()
  @ApiSecurity(API_KEY_HEADER)
  @ApiParam({ name: 'projectId', type: String, format: 'uuid' })
  @ApiOperation({ summary: "End an MCP session, at a project's own address" })
  @ApiOkResponse({ description: 'The session ended' })
  @JsonRpcRefusals({ 400: REFUSALS[400], 401: REFUSALS[401] })
  @ProjectAddressNotFound()
  handleProjectMcpDelete(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.transport.handleDelete(request, reply);
  }
}
