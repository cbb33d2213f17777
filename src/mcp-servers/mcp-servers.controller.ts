import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import type { Actor } from '../audit/actor.js';
import { API_KEY_HEADER, PublicRoute } from '../projects/api-key.guard.js';
import { CurrentActor } from '../projects/current-actor.decorator.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import {
  McpServerAppParams,
  McpServerCreate,
  McpServerPublic,
  McpServerRemoved,
  McpServerSyncReport,
  McpServerSyncRequest,
} from './mcp-servers.dto.js';
import { McpServerOAuth } from './mcp-server-oauth.js';
import { ProjectMcpServersService } from './project-mcp-servers.service.js';

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
@Controller('v1/mcp-servers')
export class McpServersController {
  constructor(
    private readonly oauth: McpServerOAuth,
    private readonly projectServers: ProjectMcpServersService,
  ) {}

  @Post()
  @ApiSecurity(API_KEY_HEADER)
  @ApiOperation({
    summary: "Add a remote MCP server as the project's own app",
    description:
      'Connects to the server (Streamable HTTP, protocol 2026-07-28 or 2025-11-25), reads every page of its tools ' +
      'and stores each as a function of a new private app that only this project sees, as `patchbay catalog ' +
      'add-mcp` does for the catalogue. A server behind OAuth is detected (or named with `auth: oauth2`): Patchbay ' +
      'discovers its authorization server and registers itself, and the app is added without functions until a ' +
      "sync with an end user's token. The URL must be on a public address unless the operator allows private " +
      'networks; `token` is used once and never stored. Answers what was imported and what was skipped, and why.',
  })
  @ApiCreatedResponse({ type: McpServerSyncReport })
  @ApiErrors([400, 401, 409], { validated: true })
  addMcpServer(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: McpServerCreate,
  ): Promise<McpServerSyncReport> {
    return this.projectServers.add(projectId, actor, body);
  }

  @Get()
  @ApiSecurity(API_KEY_HEADER)
  @ApiOperation({ summary: 'List the remote MCP servers the project added, by app name' })
  @ApiOkResponse({ type: [McpServerPublic] })
  @ApiErrors([401])
  listMcpServers(@CurrentProject() projectId: string): Promise<McpServerPublic[]> {
    return this.projectServers.list(projectId);
  }

  @Get('oauth-client')
  @PublicRoute()
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

  @Get(':app_name')
  @ApiSecurity(API_KEY_HEADER)
  @ApiOperation({ summary: 'Get a remote MCP server the project added', description: 'With how its last sync went.' })
  @ApiOkResponse({ type: McpServerPublic })
  @ApiErrors([401, 404])
  getMcpServer(@CurrentProject() projectId: string, @Param() params: McpServerAppParams): Promise<McpServerPublic> {
    return this.projectServers.get(projectId, params.app_name);
  }

  @Post(':app_name/sync')
  @ApiSecurity(API_KEY_HEADER)
  @HttpCode(200)
  @ApiOperation({
    summary: "Read the server's tools again",
    description:
      'New and changed tools are written, a tool the server no longer lists is deactivated (the execution log ' +
      "keeps its name). `token` (an end user's access token for a server behind OAuth, or the key) is used once.",
  })
  @ApiOkResponse({ type: McpServerSyncReport })
  @ApiErrors([400, 401, 404], { validated: true })
  syncMcpServer(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() params: McpServerAppParams,
    @Body() body: McpServerSyncRequest,
  ): Promise<McpServerSyncReport> {
    return this.projectServers.sync(projectId, actor, params.app_name, body);
  }

  @Delete(':app_name')
  @ApiSecurity(API_KEY_HEADER)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Remove a remote MCP server the project added',
    description:
      "Deletes the app, its functions and the project's configuration and linked accounts of it, in one " +
      'transaction; the execution log keeps its records.',
  })
  @ApiOkResponse({ type: McpServerRemoved })
  @ApiErrors([401, 404])
  removeMcpServer(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() params: McpServerAppParams,
  ): Promise<McpServerRemoved> {
    return this.projectServers.remove(projectId, actor, params.app_name);
  }
}
