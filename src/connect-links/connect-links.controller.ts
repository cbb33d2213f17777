import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import type { Actor } from '../audit/actor.js';
import { CurrentActor } from '../projects/current-actor.decorator.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { ConnectLinkCreate, ConnectLinkCreated, ConnectLinkIdParams, ConnectLinkPublic } from './connect-links.dto.js';
import { ConnectLinksService } from './connect-links.service.js';

@ApiTags('linked-accounts')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/linked-accounts/connect-links')
export class ConnectLinksController {
  constructor(private readonly connectLinks: ConnectLinksService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a connect link',
    description:
      'A single-use link to a Patchbay page where the end user links their own account of the app with the ' +
      "scheme of the project's configuration (OAuth 2.0 sign-in, or a form for an API key, user name and " +
      'password, or token), so that credentials never pass through the caller. The app must be configured ' +
      'and enabled in the project.',
  })
  @ApiOkResponse({ type: ConnectLinkCreated })
  @ApiErrors([400, 401, 404], { validated: true })
  createConnectLink(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: ConnectLinkCreate,
  ): Promise<ConnectLinkCreated> {
    return this.connectLinks.createConnectLink(projectId, actor, body);
  }

  @Get(':connect_link_id')
  @ApiOperation({
    summary: 'Get a connect link',
    description: 'Its status (pending, completed, expired, revoked) and, once completed, the linked account id.',
  })
  @ApiOkResponse({ type: ConnectLinkPublic })
  @ApiErrors([401, 404], { validated: true })
  getConnectLink(
    @CurrentProject() projectId: string,
    @Param() params: ConnectLinkIdParams,
  ): Promise<ConnectLinkPublic> {
    return this.connectLinks.getConnectLink(projectId, params.connect_link_id);
  }

  @Delete(':connect_link_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke a pending connect link', description: 'The page then answers 410.' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiErrors([401, 404, 409], { validated: true })
  revokeConnectLink(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() params: ConnectLinkIdParams,
  ): Promise<void> {
    return this.connectLinks.revokeConnectLink(projectId, actor, params.connect_link_id);
  }
}
