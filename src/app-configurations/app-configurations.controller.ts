import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import type { Actor } from '../audit/actor.js';
import { CurrentActor } from '../projects/current-actor.decorator.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import {
  AppConfigurationCreate,
  AppConfigurationDeleted,
  AppConfigurationPublic,
  AppConfigurationsListQuery,
  AppConfigurationUpdate,
  AppNameParams,
  OAuth2Overrides,
} from './app-configurations.dto.js';
import { AppConfigurationsService } from './app-configurations.service.js';

@ApiTags('app-configurations')
@ApiSecurity(API_KEY_HEADER)
@ApiExtraModels(OAuth2Overrides)
@Controller('v1/app-configurations')
export class AppConfigurationsController {
  constructor(private readonly configurations: AppConfigurationsService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create an app configuration',
    description:
      'Configures an app for the caller project. With `all_functions_enabled` true (the default) ' +
      '`enabled_functions` is ignored and returned empty; with false exactly the listed functions are enabled ' +
      '(none when the list is empty). Only `oauth2` overrides are accepted; their client secret is stored ' +
      'encrypted and returned masked.',
  })
  @ApiOkResponse({ type: AppConfigurationPublic })
  @ApiErrors([400, 401, 404, 409], { validated: true })
  createAppConfiguration(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: AppConfigurationCreate,
  ): Promise<AppConfigurationPublic> {
    return this.configurations.createAppConfiguration(projectId, actor, body);
  }

  @Get()
  @ApiOperation({ summary: 'List the app configurations of the caller project, ordered by app name' })
  @ApiOkResponse({ type: [AppConfigurationPublic] })
  @ApiErrors([401], { validated: true })
  listAppConfigurations(
    @CurrentProject() projectId: string,
    @Query() query: AppConfigurationsListQuery,
  ): Promise<AppConfigurationPublic[]> {
    return this.configurations.listAppConfigurations(projectId, query);
  }

  @Get(':app_name')
  @ApiOperation({ summary: 'Get the app configuration of one app' })
  @ApiOkResponse({ type: AppConfigurationPublic })
  @ApiErrors([401, 404])
  getAppConfiguration(
    @CurrentProject() projectId: string,
    @Param() params: AppNameParams,
  ): Promise<AppConfigurationPublic> {
    return this.configurations.getAppConfiguration(projectId, params.app_name);
  }

  @Patch(':app_name')
  @ApiOperation({
    summary: 'Update an app configuration',
    description:
      'Fields that are absent or null stay unchanged. The function-enablement rules apply to the resulting ' +
      'state. `security_scheme_overrides`, when given, replaces the stored overrides as a whole.',
  })
  @ApiOkResponse({ type: AppConfigurationPublic })
  @ApiErrors([400, 401, 404], { validated: true })
  updateAppConfiguration(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() params: AppNameParams,
    @Body() body: AppConfigurationUpdate,
  ): Promise<AppConfigurationPublic> {
    return this.configurations.updateAppConfiguration(projectId, actor, params.app_name, body);
  }

  @Delete(':app_name')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Delete an app configuration',
    description: 'Removes the project linked accounts of the app and then the configuration, in one transaction.',
  })
  @ApiOkResponse({ type: AppConfigurationDeleted })
  @ApiErrors([401, 404])
  deleteAppConfiguration(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Param() params: AppNameParams,
  ): Promise<AppConfigurationDeleted> {
    return this.configurations.deleteAppConfiguration(projectId, actor, params.app_name);
  }
}
