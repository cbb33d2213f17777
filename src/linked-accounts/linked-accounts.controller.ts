import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import type { Actor } from '../audit/actor.js';
import { CurrentActor } from '../projects/current-actor.decorator.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import {
  LinkedAccountAPIKeyCreate,
  LinkedAccountHTTPBasicCreate,
  LinkedAccountHTTPBearerCreate,
  LinkedAccountIdParams,
  LinkedAccountNoAuthCreate,
  LinkedAccountPublic,
  LinkedAccountsListQuery,
  LinkedAccountUpdate,
} from './linked-accounts.dto.js';
import { LinkedAccountsService } from './linked-accounts.service.js';

const LINK_DESCRIPTION =
  'The project must have a configuration for the app that uses this security scheme. ' +
  'Credentials are stored encrypted and never returned.';

@ApiTags('linked-accounts')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/linked-accounts')
export class LinkedAccountsController {
  constructor(private readonly accounts: LinkedAccountsService) {}

  @Post('no-auth')
  @HttpCode(200)
  @ApiOperation({ summary: 'Link an account of an app configured with no_auth', description: LINK_DESCRIPTION })
  @ApiOkResponse({ type: LinkedAccountPublic })
  @ApiErrors([400, 401, 404, 409], { validated: true })
  linkNoAuthAccount(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: LinkedAccountNoAuthCreate,
  ): Promise<LinkedAccountPublic> {
    return this.accounts.linkNoAuthAccount(projectId, actor, body);
  }

  @Post('api-key')
  @HttpCode(200)
  @ApiOperation({ summary: 'Link an account of an app configured with api_key', description: LINK_DESCRIPTION })
  @ApiOkResponse({ type: LinkedAccountPublic })
  @ApiErrors([400, 401, 404, 409], { validated: true })
  linkApiKeyAccount(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: LinkedAccountAPIKeyCreate,
  ): Promise<LinkedAccountPublic> {
    return this.accounts.linkApiKeyAccount(projectId, actor, body);
  }

  @Post('http-basic')
  @HttpCode(200)
  @ApiOperation({ summary: 'Link an account of an app configured with http_basic', description: LINK_DESCRIPTION })
  @ApiOkResponse({ type: LinkedAccountPublic })
  @ApiErrors([400, 401, 404, 409], { validated: true })
  linkHttpBasicAccount(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: LinkedAccountHTTPBasicCreate,
  ): Promise<LinkedAccountPublic> {
    return this.accounts.linkHttpBasicAccount(projectId, actor, body);
  }

  @Post('http-bearer')
  @HttpCode(200)
  @ApiOperation({ summary: 'Link an account of an app configured with http_bearer', description: LINK_DESCRIPTION })
  @ApiOkResponse({ type: LinkedAccountPublic })
  @ApiErrors([400, 401, 404, 409], { validated: true })
  linkHttpBearerAccount(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: LinkedAccountHTTPBearerCreate,
  ): Promise<LinkedAccountPublic> {
    return this.accounts.linkHttpBearerAccount(projectId, actor, body);
  }

  @Get()
  @ApiOperation({
    summary: 'List the linked accounts of the caller project',
    description: 'Ordered by creation time. `app_name` with `linked_account_owner_id` identifies at most one account.',
  })
  @ApiOkResponse({ type: [LinkedAccountPublic] })
  @ApiErrors([401], { validated: true })
  listLinkedAccounts(
    @CurrentProject() projectId: string,
    @Query() query: LinkedAccountsListQuery,
  ): Promise<LinkedAccountPublic[]> {
    return this.accounts.listLinkedAccounts(projectId, query);
  }

  @Get(':linked_account_id')
  @ApiOperation({ summary: 'Get a linked account' })
  @ApiOkResponse({ type: LinkedAccountPublic })
  @ApiErrors([401, 404], { validated: true })
  getLinkedAccount(
    @CurrentProject() projectId: string,
    @Param() params: LinkedAccountIdParams,
  ): Promise<LinkedAccountPublic> {
    return this.accounts.getLinkedAccount(projectId, params.linked_account_id);
  }

  @Patch(':linked_account_id')
  @ApiOperation({ summary: 'Enable or disable a linked account' })
  @ApiOkResponse({ type: LinkedAccountPublic })
  @ApiErrors([401, 404], { validated: true })
  updateLinkedAccount(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() params: LinkedAccountIdParams,
    @Body() body: LinkedAccountUpdate,
  ): Promise<LinkedAccountPublic> {
    return this.accounts.updateLinkedAccount(projectId, actor, params.linked_account_id, body);
  }

  @Delete(':linked_account_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a linked account' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors([401, 404], { validated: true })
  deleteLinkedAccount(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() params: LinkedAccountIdParams,
  ): Promise<void> {
    return this.accounts.deleteLinkedAccount(projectId, actor, params.linked_account_id);
  }
}
