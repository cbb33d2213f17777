import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { PublicRoute } from '../projects/api-key.guard.js';
import { McpServerOAuth } from './mcp-server-oauth.js';

/** Patchbay as an OAuth 2.0 client of remote MCP servers' authorization servers, described by itself. */
export class ClientIdMetadataDocument {
  @ApiProperty({ description: "This document's own URL: the client_id Patchbay signs in with" })
  client_id: string;

  @ApiProperty({ example: 'Patchbay' })
  client_name: string;

  @ApiProperty({ description: "Patchbay's public address" })
  client_uri: string;

  @ApiProperty({ type: [String], description: "Patchbay's OAuth 2.0 callback" })
  redirect_uris: string[];

  @ApiProperty({ type: [String], example: ['authorization_code', 'refresh_token'] })
  grant_types: string[];

  @ApiProperty({ type: [String], example: ['code'] })
  response_types: string[];

  @ApiProperty({ example: 'none', description: 'A public client: PKCE, no secret' })
  token_endpoint_auth_method: string;
}

@ApiTags('mcp-servers')
@PublicRoute()
@Controller('v1/mcp-servers')
export class McpServersController {
  constructor(private readonly oauth: McpServerOAuth) {}

  @Get('oauth-client')
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOperation({
    summary: "Patchbay's OAuth Client ID Metadata Document",
    description:
      "The client metadata remote MCP servers' authorization servers fetch when Patchbay signs in with this URL as its " +
      'client_id (OAuth Client ID Metadata Document, as the MCP authorization specification has it). Needs no API key.',
  })
  @ApiOkResponse({ type: ClientIdMetadataDocument })
  getOAuthClientDocument(): ClientIdMetadataDocument {
    return this.oauth.clientMetadataDocument();
  }
}
