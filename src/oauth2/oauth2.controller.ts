import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiSecurity,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors } from '../../libs/common/src/index.js';
import { LinkedAccountPublic } from '../linked-accounts/linked-accounts.dto.js';
import { API_KEY_HEADER, PublicRoute } from '../projects/api-key.guard.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { prefersHtml } from './callback-response.js';
import { OAuth2CallbackQuery, OAuth2LinkStart, OAuth2LinkStartQuery } from './oauth2.dto.js';
import { OAuth2Service } from './oauth2.service.js';

// Static segments: Fastify's router prefers them to the linked-accounts controller's `:linked_account_id`.
@ApiTags('linked-accounts')
@Controller('v1/linked-accounts/oauth2')
export class OAuth2Controller {
  constructor(private readonly oauth2: OAuth2Service) {}

  @Get()
  @ApiSecurity(API_KEY_HEADER)
  @ApiOperation({
    summary: 'Start OAuth 2.0 linking',
    description:
      'Returns the provider authorization address (authorization code flow with PKCE S256) to open in the ' +
      'end user browser. The flow expires after 10 minutes and its state can be used once. The client is the ' +
      "configuration's security_scheme_overrides.oauth2 when set, else the app's.",
  })
  @ApiOkResponse({ type: OAuth2LinkStart })
  @ApiErrors([400, 401, 404], { validated: true })
  startOAuth2Linking(
    @CurrentProject() projectId: string,
    @Query() query: OAuth2LinkStartQuery,
  ): Promise<OAuth2LinkStart> {
    return this.oauth2.startOAuth2Linking(projectId, query);
  }

  @Get('callback')
  @PublicRoute()
  @ApiOperation({
    summary: 'OAuth 2.0 callback',
    description:
      'Where the provider sends the browser back. Needs no API key: the single-use state identifies the flow. ' +
      'Creates the linked account, or updates the existing account of the owner in place (same id). With an ' +
      'after_oauth2_link_redirect_url, answers 302 to it with linked_account_id and status=success, or ' +
      'status=error, error and error_description; otherwise LinkedAccountPublic (or a short HTML page when the ' +
      'request accepts text/html), or the error.',
  })
  @ApiExtraModels(LinkedAccountPublic)
  @ApiOkResponse({
    description: 'Linked: the account as JSON, or a short HTML page when the request accepts text/html',
    content: {
      'application/json': { schema: { $ref: getSchemaPath(LinkedAccountPublic) } },
      'text/html': { schema: { type: 'string' } },
    },
  })
  @ApiFoundResponse({ description: 'Back to after_oauth2_link_redirect_url with the outcome in its query' })
  @ApiErrors([400, 502], { validated: true })
  async handleOAuth2Callback(
    @Query() query: OAuth2CallbackQuery,
    @Headers('accept') accept: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const answer = await this.oauth2.handleOAuth2Callback(query, prefersHtml(accept));
    await reply.status(answer.status).headers(answer.headers).send(answer.body);
  }
}
