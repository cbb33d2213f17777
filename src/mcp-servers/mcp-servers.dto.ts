import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import {
  encodeIssue,
  OptionalEnum,
  OptionalString,
  OptionalStringArray,
  RequiredHttpUrl,
  RequiredString,
} from '../../libs/common/src/index.js';

/** How end users sign in to the server, as `catalog add-mcp --auth` names it. */
export const MCP_SERVER_AUTHS = ['none', 'bearer', 'api_key', 'oauth2'] as const;
export type McpServerAuthName = (typeof MCP_SERVER_AUTHS)[number];

/** An HTTP header's name (RFC 9110 token characters). */
export const HTTP_HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A catalogue app name: upper-case words joined by one underscore. */
const APP_NAME = /^[A-Z0-9]+(_[A-Z0-9]+)*$/;
/** Room for `__` and a tool's name within the catalogue's 48 characters of a function name. */
const APP_NAME_MAX = 30;

export class McpServerCreate {
  @RequiredHttpUrl({
    description:
      "The server's Streamable HTTP endpoint: https, or http on 127.0.0.1 where the operator allows private networks " +
      '(MCP_SERVERS_ALLOW_PRIVATE_NETWORKS); a private, loopback or reserved address is refused otherwise',
    example: 'https://mcp.example.com/mcp',
  })
  url: string;

  @OptionalString({
    description:
      "The app's name, upper-case words joined by `_`; taken from the server's own name when absent. It must not " +
      'be taken by the catalogue or by another project',
    example: 'EXAMPLE',
    minLength: 1,
    maxLength: APP_NAME_MAX,
  })
  @Matches(APP_NAME, {
    message: encodeIssue('string_pattern_mismatch', 'Input should be upper-case letters and digits joined by `_`'),
  })
  app_name?: string;

  @OptionalString({ description: "Shown to people; the server's title or name when absent", maxLength: 200 })
  display_name?: string;

  @OptionalStringArray({ description: 'Categories of the app' })
  categories?: string[];

  @OptionalEnum(MCP_SERVER_AUTHS, {
    enumName: 'McpServerAuth',
    description:
      'How end users sign in to the server: `none`, `bearer` (a token), `api_key` (in the header `api_key_header`) ' +
      'or `oauth2` (the MCP authorization specification: discovered, Patchbay registers itself). Detected when ' +
      'absent: `none` when the tools can be listed without credentials, `oauth2` when the server answers 401 and ' +
      'publishes its protected resource metadata',
  })
  auth?: McpServerAuthName;

  @OptionalString({ description: 'The header that carries the API key; with `auth: api_key` only', maxLength: 100 })
  @Matches(HTTP_HEADER_NAME, { message: encodeIssue('string_pattern_mismatch', 'Input should be an HTTP header name') })
  api_key_header?: string;

  @OptionalString({
    description:
      'A credential to list the tools with now (a bearer token, or the API key); used once, never stored or shown',
    maxLength: 8192,
  })
  token?: string;

  @OptionalString({ description: 'With `auth: oauth2`: the client Patchbay is registered as, instead of registering' })
  client_id?: string;

  @OptionalString({ description: 'With `client_id`, for a confidential client: stored sealed, never shown' })
  client_secret?: string;
}

export class McpServerSyncRequest {
  @OptionalString({
    description: "A credential to list the tools with (an end user's access token, the API key); never stored",
    maxLength: 8192,
  })
  token?: string;
}

export class McpServerAppParams {
  @RequiredString({ description: "The app of the project's MCP server", example: 'EXAMPLE' })
  app_name: string;
}

export class McpServerInfo {
  @ApiProperty({ description: "The server's own name" })
  name: string;

  @ApiProperty()
  version: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The protocol revision negotiated (2026-07-28, 2025-11-25…); null before the tools were read',
  })
  protocol_version: string | null;
}

export class McpServerFunctionChanges {
  @ApiProperty({ type: [String], description: 'Functions new in the catalogue' })
  added: string[];

  @ApiProperty({ type: [String], description: 'Functions whose definition changed' })
  updated: string[];

  @ApiProperty({ description: 'How many functions were already as listed' })
  unchanged: number;

  @ApiProperty({
    type: [String],
    description: 'Functions whose tool the server no longer lists: deactivated, kept for the execution log',
  })
  deactivated: string[];
}

export class McpSkippedTool {
  @ApiProperty({ description: "The tool's name at the server" })
  tool: string;

  @ApiProperty({ description: 'Why it was not imported' })
  reason: string;
}

/** What adding or syncing a server did. */
export class McpServerSyncReport {
  @ApiProperty({ example: 'EXAMPLE' })
  app_name: string;

  @ApiProperty({ description: 'The endpoint, as registered' })
  url: string;

  @ApiProperty({ type: McpServerInfo })
  server: McpServerInfo;

  @ApiProperty({ type: [String], description: "The app's security scheme", example: ['no_auth'] })
  security_schemes: string[];

  @ApiProperty({ type: McpServerFunctionChanges })
  functions: McpServerFunctionChanges;

  @ApiProperty({ type: [McpSkippedTool], description: 'Tools not imported, each with its reason' })
  skipped: McpSkippedTool[];
}

/** A remote MCP server the project added as its own app. */
export class McpServerPublic {
  @ApiProperty({ example: 'EXAMPLE' })
  app_name: string;

  @ApiProperty()
  display_name: string;

  @ApiProperty({ description: 'The endpoint, as registered' })
  url: string;

  @ApiProperty({ enum: ['private'], description: 'Seen by this project alone' })
  visibility: 'private';

  @ApiProperty({ type: [String], example: ['oauth2'] })
  security_schemes: string[];

  @ApiProperty({ type: String, nullable: true })
  server_name: string | null;

  @ApiProperty({ type: String, nullable: true })
  server_version: string | null;

  @ApiProperty({ type: String, nullable: true })
  protocol_version: string | null;

  @ApiProperty({ description: 'Active tools after the last sync' })
  tool_count: number;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true })
  synced_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why the last sync failed; null after one that succeeded' })
  sync_error: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

export class McpServerRemoved {
  @ApiProperty({ example: 'EXAMPLE' })
  app_name: string;

  @ApiProperty({ description: "The project's linked accounts of the app, deleted with it" })
  linked_accounts_deleted: number;
}
