import { Body, Controller, Delete, Get, HttpCode, Put } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import type { Actor } from '../audit/actor.js';
import { CurrentActor } from '../projects/current-actor.decorator.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { IdentityProviderPublic, IdentityProviderSet } from './identity-providers.dto.js';
import { IdentityProvidersService } from './identity-providers.service.js';

@ApiTags('mcp')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/mcp/identity-provider')
export class IdentityProvidersController {
  constructor(private readonly identityProviders: IdentityProvidersService) {}

  @Put()
  @ApiOperation({
    summary: 'Set the identity provider MCP clients sign users in with',
    description:
      'The OpenID Connect provider of your product. With it, MCP clients (Claude, ChatGPT, VS Code, Cursor…) add ' +
      'the project by its address (`mcp_url`) and sign your users in by OAuth 2.1: the user signs in at this ' +
      'provider, `owner_claim` of the ID token becomes the linked_account_owner_id, and the user consents. ' +
      'Register `redirect_uri` with the provider. The secret is stored encrypted.',
  })
  @ApiOkResponse({ type: IdentityProviderPublic })
  @ApiErrors([400, 401], { validated: true })
  setMcpIdentityProvider(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: IdentityProviderSet,
  ): Promise<IdentityProviderPublic> {
    return this.identityProviders.setIdentityProvider(projectId, actor, body);
  }

  @Get()
  @ApiOperation({ summary: 'Get the identity provider of MCP sign-in (secret masked)' })
  @ApiOkResponse({ type: IdentityProviderPublic })
  @ApiErrors([401, 404])
  getMcpIdentityProvider(@CurrentProject() projectId: string): Promise<IdentityProviderPublic> {
    return this.identityProviders.getIdentityProvider(projectId);
  }

  @Delete()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Remove the identity provider of MCP sign-in',
    description: 'MCP clients can no longer sign users in; the OAuth clients and tokens of the project are forgotten.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors([401, 404])
  deleteMcpIdentityProvider(@CurrentProject() projectId: string, @CurrentActor() actor: Actor): Promise<void> {
    return this.identityProviders.deleteIdentityProvider(projectId, actor);
  }
}
