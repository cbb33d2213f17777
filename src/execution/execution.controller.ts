import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import { ExecutionPublic, FunctionExecute, FunctionExecutionResult, ListExecutionsQuery } from './execution.dto.js';
import { DIRECT_ROUTE, restOrigin } from './execute-route.js';
import { ExecutionService } from './execution.service.js';

@ApiSecurity(API_KEY_HEADER)
@Controller('v1')
export class ExecutionController {
  constructor(private readonly execution: ExecutionService) {}

  // Fastify calls src/execution/execute-route.ts's handler for this route: the same guards, pipe, call and
  // filter, without Nest's router in between. This method declares the route and documents it.
  @Post('functions/:function_name/execute')
  @RouteConfig({ [DIRECT_ROUTE]: true })
  @HttpCode(200)
  @ApiTags('functions')
  @ApiOperation({
    summary: 'Execute a function for a linked-account owner',
    description:
      'Checks, in this order: the function exists (404); the project has a configuration of its app (404) that ' +
      'is enabled (403) and enables the function (403); the owner has a linked account of the app (404) that is ' +
      'enabled (403) and uses the configured security scheme (400); `function_input` matches the parameters the ' +
      'function shows (400, listing every violation). Then the function runs; a run that fails (upstream error, ' +
      'timeout, refused token refresh…) answers 200 with `success: false` and an `error`.',
  })
  @ApiParam({ name: 'function_name', type: String, description: 'Function name', example: 'GITHUB__CREATE_ISSUE' })
  @ApiOkResponse({ type: FunctionExecutionResult })
  @ApiErrors([400, 401, 403, 404], { validated: true })
  @ApiResponse({
    status: 429,
    description:
      "too many executions for the linked-account owner (OWNER_RATE_LIMIT_EXECUTIONS, or the app configuration's " +
      '`owner_execution_limit`), checked after the pre-checks and before the upstream is called',
  })
  executeFunction(
    @CurrentProject() projectId: string,
    // A plain string: the route only matches with a non-empty name, and the hot path skips a DTO validation.
    @Param('function_name') functionName: string,
    @Body() body: FunctionExecute,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<FunctionExecutionResult> {
    return this.execution.executeFunction(projectId, functionName, body, restOrigin(reply));
  }

  @Get('executions')
  @ApiTags('executions')
  @ApiOperation({
    summary: 'List the executions of the caller project, newest first',
    description: 'What ran, for whom, whether it succeeded, the upstream status and how long it took; never inputs.',
  })
  @ApiOkResponse({ type: [ExecutionPublic] })
  @ApiErrors([401], { validated: true })
  listExecutions(@CurrentProject() projectId: string, @Query() query: ListExecutionsQuery): Promise<ExecutionPublic[]> {
    return this.execution.listExecutions(projectId, query);
  }
}
