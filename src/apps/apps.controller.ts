import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { AppBasic, AppBasicWithFunctions, AppNamePath, SearchAppsQuery } from './apps.dto.js';
import { AppsService } from './apps.service.js';

@ApiTags('apps')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/apps')
export class AppsController {
  constructor(private readonly apps: AppsService) {}

  @Get('search')
  @ApiOperation({
    summary: 'Search apps',
    description:
      'Visible apps. Without `intent` they are ordered by name; with it, by relevance to the intent: field-weighted ' +
      'BM25 over names, descriptions, categories and what their functions say, with synonyms and typo corrections, ' +
      'fused with the similarity of embeddings. Apps unrelated to the intent follow, by name; ties by name. ' +
      '`limit` and `offset` page the result.',
  })
  @ApiOkResponse({ type: [AppBasic], description: 'One page of matching apps' })
  @ApiErrors([401], { validated: true })
  searchApps(@CurrentProject() projectId: string, @Query() query: SearchAppsQuery): Promise<AppBasic[]> {
    return this.apps.searchApps(projectId, query);
  }

  @Get(':app_name')
  @ApiOperation({ summary: 'Get an app with its visible functions' })
  @ApiOkResponse({ type: AppBasicWithFunctions, description: 'The app and its visible functions' })
  // A path segment is always a non-empty string, so this route has no 422 answer.
  @ApiErrors([401, 404])
  getApp(@Param() path: AppNamePath): Promise<AppBasicWithFunctions> {
    return this.apps.getApp(path.app_name);
  }
}
