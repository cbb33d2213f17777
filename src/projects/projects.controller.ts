import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from './api-key.guard.js';
import type { Actor } from '../audit/actor.js';
import { CurrentActor } from './current-actor.decorator.js';
import { CurrentProject } from './current-project.decorator.js';
import { ProjectPublic, ProjectUpdate } from './projects.dto.js';
import { ProjectsService } from './projects.service.js';

/** The project of the API key: its name and the branding end users see on Patchbay's pages. */
@ApiTags('project')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/project')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  @Get()
  @ApiOperation({ summary: "Get the API key's project, with its branding" })
  @ApiOkResponse({ type: ProjectPublic })
  @ApiErrors([401])
  getProject(@CurrentProject() projectId: string): Promise<ProjectPublic> {
    return this.projects.getProject(projectId);
  }

  @Patch()
  @ApiOperation({
    summary: "Change the API key's project (only the fields sent)",
    description:
      'The branding of the end-user pages (connect links, OAuth 2.0 linking results, MCP sign-in and consent): ' +
      "your app's display name, logo and accent colour, and the address the result pages lead back to. A field " +
      'absent from the body is left unchanged; null clears it.',
  })
  @ApiOkResponse({ type: ProjectPublic })
  @ApiErrors([401], { validated: true })
  updateProject(
    @CurrentProject() projectId: string,
    @CurrentActor() actor: Actor,
    @Body() body: ProjectUpdate,
  ): Promise<ProjectPublic> {
    return this.projects.updateProject(projectId, actor, body);
  }
}
