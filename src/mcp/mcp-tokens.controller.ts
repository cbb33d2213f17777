import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import type { Actor } from '../audit/actor.js';
import { CurrentActor } from '../projects/current-actor.decorator.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { McpTokenCreate, McpTokenCreated, McpTokenPath, McpTokenPublic } from './mcp.dto.js';
import { McpTokensService } from './mcp-tokens.service.js';

@ApiTags('mcp')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/mcp/tokens')
export class McpTokensController {
  constructor(private readonly tokens: McpTokensService) {}

  @Post()
  @ApiOperation({
    summary: 'Create an owner-scoped MCP token',
    description:
      'A token for one end user, to put in their MCP client: it acts for this project and this ' +
      'linked_account_owner_id only (and only `apps` when given), whatever a request says. Shown once; ' +
      'stored hashed. Send it as `Authorization: Bearer <token>` to /v1/mcp.',
  })
  @ApiCreatedResponse({ type: McpTokenCreated })
  @ApiErrors([401, 404], { validated: true })
  createMcpToken(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: McpTokenCreate,
  ): Promise<McpTokenCreated> {
    return this.tokens.createToken(projectId, actor, body);
  }

  @Get()
  @ApiOperation({
    summary: 'List the MCP tokens in use',
    description:
      'Unrevoked, unexpired owner-scoped tokens, newest first: those created with POST and those MCP clients ' +
      'obtained by signing a user in (with the client_name they registered). Never the tokens themselves.',
  })
  @ApiOkResponse({ type: [McpTokenPublic] })
  @ApiErrors([401])
  listMcpTokens(@CurrentProject() projectId: string): Promise<McpTokenPublic[]> {
    return this.tokens.listTokens(projectId);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke an MCP token', description: 'At once, on every instance; its sessions end.' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors([401, 404], { validated: true })
  revokeMcpToken(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() path: McpTokenPath,
  ): Promise<void> {
    return this.tokens.revokeToken(projectId, actor, path.id);
  }
}
