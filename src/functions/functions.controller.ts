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
  FunctionDetails,
  FunctionNamePath,
  FunctionSearchResult,
  ListFunctionsQuery,
  OpenAIFunctionDefinition,
  OpenAIResponsesFunctionDefinition,
  SearchFunctionsQuery,
} from './functions.dto.js';
import { FunctionsService } from './functions.service.js';

/**
 * The four shapes a function can be given in, by `format`. `anyOf`, not `oneOf`: FunctionBasic's two
 * fields are part of every other shape, so an OpenAI definition matches two of them.
 */
const DEFINITION_SHAPES = {
  anyOf: [
    { $ref: getSchemaPath(FunctionBasic) },
    { $ref: getSchemaPath(OpenAIFunctionDefinition) },
    { $ref: getSchemaPath(OpenAIResponsesFunctionDefinition) },
    { $ref: getSchemaPath(AnthropicFunctionDefinition) },
  ],
};

@ApiTags('functions')
@ApiSecurity(API_KEY_HEADER)
@ApiExtraModels(FunctionBasic, OpenAIFunctionDefinition, OpenAIResponsesFunctionDefinition, AnthropicFunctionDefinition)
@Controller('v1/functions')
export class FunctionsController {
  constructor(private readonly functions: FunctionsService) {}

  @Get()
  @ApiOperation({
    summary: 'List functions with their details',
    description:
      "Visible functions of visible apps, by name, as ACI's FunctionDetails (the whole parameter schema included). " +
      '`app_names` and `function_names` filter; `limit` and `offset` page the result.',
  })
  @ApiOkResponse({ type: [FunctionDetails], description: 'One page of functions' })
  @ApiErrors([401], { validated: true })
  listFunctions(@CurrentProject() projectId: string, @Query() query: ListFunctionsQuery): Promise<FunctionDetails[]> {
    return this.functions.listFunctions(projectId, query);
  }

  @Get('search')
  @ApiOperation({
    summary: 'Search functions',
    description:
      'Visible functions of visible apps. Without `intent` they are ordered by name; with it, by relevance to the ' +
      'intent: field-weighted BM25 over names, descriptions, tags and parameter names, with synonyms and typo ' +
      "corrections, fused with the similarity of embeddings, and part of the relevance of the function's app " +
      '("send an email" finds GMAIL__SEND_EMAIL). Functions unrelated to the intent follow, by name; ties by name. ' +
      '`limit` and `offset` page the result. `format` decides the shape of each result: FunctionBasic by default, ' +
      'or a tool definition with the visible parameters.',
  })
  @ApiOkResponse({
    description:
      'One page of matching functions. Without `format` (or with `basic`) each is a FunctionBasic ' +
      '`{name, description}`; `openai` gives OpenAIFunctionDefinition, `openai_responses` ' +
      'OpenAIResponsesFunctionDefinition and `anthropic` AnthropicFunctionDefinition. The item schema holds the ' +
      'fields of all four, so that `name` reads directly in the default shape.',
    type: [FunctionSearchResult],
  })
  @ApiErrors([401], { validated: true })
  searchFunctions(
    @CurrentProject() projectId: string,
    @Query() query: SearchFunctionsQuery,
  ): Promise<FunctionDefinition[]> {
    return this.functions.searchFunctions(projectId, query);
  }

  @Get(':function_name/definition')
  @ApiOperation({
    summary: 'Get an LLM-usable function definition',
    description:
      '`format` (or the older `inference_provider`) decides the shape: `openai` (default) answers `{"type": ' +
      '"function", "function": {name, description, parameters}}`, `openai_responses` answers `{"type": "function", ' +
      'name, description, parameters}`, `anthropic` answers `{name, description, input_schema}`, `basic` answers ' +
      '`{name, description}`. The schema shows only the parameters an LLM may set.',
  })
  @ApiOkResponse({ description: 'The definition in the asked format', schema: DEFINITION_SHAPES })
  @ApiErrors([401, 404], { validated: true })
  getFunctionDefinition(
    @CurrentProject() projectId: string,
    @Param() path: FunctionNamePath,
    @Query() query: FunctionDefinitionQuery,
  ): Promise<FunctionDefinition> {
    return this.functions.getFunctionDefinition(projectId, path.function_name, query);
  }
}
