import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { AppBasic, AppDetails, AppNamePath, ListAppsQuery, SearchAppsQuery } from './apps.dto.js';
import { AppsService } from './apps.service.js';

@ApiTags('apps')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Get()
  @ApiOperation({
    summary: 'List apps with their details',
    description:
      "Visible apps by name, each as the app details (ACI's list of apps); `app_names` filters, `limit` and " +
      '`offset` page the result.',
  })
  @ApiOkResponse({ type: [AppDetails], description: 'One page of apps' })
  @ApiErrors([401], { validated: true })
  listApps(@CurrentProject() projectId: string, @Query() query: ListAppsQuery): Promise<AppDetails[]> {
    return this.apps.listApps(projectId, query);
  }

  @Get('search')
  @ApiOperation({
    summary: 'Search apps',
    description:
      'Visible apps. Without `intent` they are ordered by name; with it, by relevance to the intent: field-weighted ' +
      'BM25 over names, descriptions, categories and what their functions say, with synonyms and typo corrections, ' +
      'fused with the similarity of embeddings. Apps unrelated to the intent follow, by name; ties by name. ' +
      '`limit` and `offset` page the result. `include_functions` adds the visible functions of each app.',
  })
  @ApiOkResponse({ type: [AppBasic], description: 'One page of matching apps' })
  @ApiErrors([401], { validated: true })
  searchApps(@CurrentProject() projectId: string, @Query() query: SearchAppsQuery): Promise<AppBasic[]> {
    return this.apps.searchApps(projectId, query);
  }

  @Get(':app_name')
  @ApiOperation({
    summary: 'Get an app with its visible functions',
    description:
      "The contract's AppBasicWithFunctions (`name`, `description`, `functions`) with the fields of ACI's app " +
      'details. Only the public part of each security scheme is shown (for OAuth 2.0 its scopes).',
  })
  @ApiOkResponse({ type: AppDetails, description: 'The app and its visible functions' })
  // A path segment is always a non-empty string, so this route has no 422 answer.
  @ApiErrors([401, 404])
  getApp(@CurrentProject() projectId: string, @Param() path: AppNamePath): Promise<AppDetails> {
    return this.apps.getApp(projectId, path.app_name);
  }
}
