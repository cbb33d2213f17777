import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiErrors } from '../../libs/common/src/index.js';
import { API_KEY_HEADER } from '../projects/api-key.guard.js';
import { CurrentProject } from '../projects/current-project.decorator.js';
import {
  AnthropicFunctionDefinition,
  FunctionBasic,
  type FunctionDefinition,
  FunctionDefinitionQuery,
  FunctionNamePath,
  OpenAIFunctionDefinition,
  SearchFunctionsQuery,
} from './functions.dto.js';
import { FunctionsService } from './functions.service.js';

@ApiTags('functions')
@ApiSecurity(API_KEY_HEADER)
@Controller('v1/functions')
export class FunctionsController {
  constructor(private readonly functions: FunctionsService) {}

  @Get('search')
  @ApiOperation({
    summary: 'Search functions',
    description:
      'Visible functions of visible apps. Without `intent` they are ordered by name; with it, by relevance to the ' +
      'intent: field-weighted BM25 over names, descriptions, tags and parameter names, with synonyms and typo ' +
      "corrections, fused with the similarity of embeddings, and part of the relevance of the function's app " +
      '("send an email" finds GMAIL__SEND_EMAIL). Functions unrelated to the intent follow, by name; ties by name. ' +
      '`limit` and `offset` page the result.',
  })
  @ApiOkResponse({ type: [FunctionBasic], description: 'One page of matching functions' })
  @ApiErrors([401], { validated: true })
  searchFunctions(@CurrentProject() projectId: string, @Query() query: SearchFunctionsQuery): Promise<FunctionBasic[]> {
    return this.functions.searchFunctions(projectId, query);
  }

  @Get(':function_name/definition')
  @ApiOperation({
    summary: 'Get an LLM-usable function definition',
    description:
      '`openai` answers `{"type": "function", "function": {name, description, parameters}}`, `anthropic` answers ' +
      '`{name, description, input_schema}`. The schema shows only the parameters an LLM may set.',
  })
  @ApiExtraModels(OpenAIFunctionDefinition, AnthropicFunctionDefinition)
  @ApiOkResponse({
    description: 'The definition in the format of the inference provider',
    schema: {
      oneOf: [{ $ref: getSchemaPath(OpenAIFunctionDefinition) }, { $ref: getSchemaPath(AnthropicFunctionDefinition) }],
    },
  })
  @ApiErrors([401, 404], { validated: true })
  getFunctionDefinition(
    @Param() path: FunctionNamePath,
    @Query() query: FunctionDefinitionQuery,
  ): Promise<FunctionDefinition> {
    return this.functions.getFunctionDefinition(path.function_name, query.inference_provider);
  }
}
