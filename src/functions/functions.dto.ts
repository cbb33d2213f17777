import { ApiProperty, ApiPropertyOptional, IntersectionType } from '@nestjs/swagger';
import {
  OptionalBoolean,
  OptionalEnum,
  OptionalInt,
  OptionalQueryStringArray,
  OptionalString,
  RequiredString,
  AgreesWith,
} from '../../libs/common/src/index.js';
import type { FunctionProtocol } from './function.entity.js';

export const INFERENCE_PROVIDERS = ['openai', 'anthropic'] as const;
export type InferenceProvider = (typeof INFERENCE_PROVIDERS)[number];

/**
 * Shapes of a function for an LLM: `basic` `{name, description}`, `openai` (Chat Completions tools),
 * `openai_responses` (Responses API tools), `anthropic` (Messages API tools). ACI's current name for
 * the choice is `format`; the contract's `inference_provider` offers the two middle ones.
 */
export const DEFINITION_FORMATS = ['basic', 'openai', 'openai_responses', 'anthropic'] as const;
export type DefinitionFormat = (typeof DEFINITION_FORMATS)[number];

export class SearchFunctionsQuery {
  @OptionalQueryStringArray({
    description: 'Only functions of these apps (repeat the key for several)',
    example: ['GITHUB', 'SLACK'],
  })
  app_names?: string[];

  @OptionalString({
    description: 'Natural-language intent; results are sorted by relevance to it',
    example: 'send a message to a channel',
  })
  intent?: string;

  @OptionalBoolean({
    description: 'Only functions the caller project may run: its configuration of the app is enabled and enables them',
    default: false,
  })
  configured_only: boolean = false;

  @OptionalBoolean({
    description: "ACI's name for `configured_only` (deprecated there in favour of `allowed_only`); same meaning",
    default: false,
  })
  allowed_apps_only: boolean = false;

  @OptionalBoolean({
    description:
      'Only functions the caller project can run right now: its configuration of the app is enabled and enables ' +
      'the function. Combined with `configured_only` or `allowed_apps_only`, the strictest applies',
    default: false,
  })
  allowed_only: boolean = false;

  @OptionalEnum(DEFINITION_FORMATS, {
    enumName: 'FunctionDefinitionFormat',
    description:
      'Shape of each result: `basic` `{name, description}` (FunctionBasic), or the tool definition of `openai`, ' +
      '`openai_responses` or `anthropic` with the visible parameters, as the definition endpoint gives it',
    default: 'basic',
  })
  format: DefinitionFormat = 'basic';

  @OptionalInt({ description: 'Maximum number of functions in the response', default: 100, min: 1, max: 1000 })
  limit: number = 100;

  @OptionalInt({ description: 'Number of functions to skip', default: 0, min: 0 })
  offset: number = 0;
}

export class ListFunctionsQuery {
  @OptionalQueryStringArray({
    description: 'Only functions of these apps (repeat the key for several)',
    example: ['GITHUB'],
  })
  app_names?: string[];

  @OptionalQueryStringArray({
    description: 'Only these functions (repeat the key for several)',
    example: ['GITHUB__CREATE_ISSUE'],
  })
  function_names?: string[];

  @OptionalInt({ description: 'Maximum number of functions in the response', default: 100, min: 1, max: 1000 })
  limit: number = 100;

  @OptionalInt({ description: 'Number of functions to skip', default: 0, min: 0 })
  offset: number = 0;
}

export class FunctionNamePath {
  @RequiredString({ description: 'Function name', example: 'GITHUB__CREATE_ISSUE' })
  function_name: string;
}

export class FunctionDefinitionQuery {
  @OptionalEnum(DEFINITION_FORMATS, {
    enumName: 'FunctionDefinitionFormat',
    description:
      'The shape of the definition (default `openai`). When `inference_provider` is given too, both must agree',
  })
  @AgreesWith('inference_provider')
  format?: DefinitionFormat;

  @OptionalEnum(INFERENCE_PROVIDERS, {
    enumName: 'InferenceProvider',
    description: "The contract's name for `format`, with two of its values (default `openai`)",
    default: 'openai',
  })
  inference_provider?: InferenceProvider;
}

export class FunctionBasic {
  @ApiProperty({ example: 'GITHUB__CREATE_ISSUE' })
  name: string;

  @ApiProperty({ example: 'Create an issue in a repository' })
  description: string;
}

/** The JSON Schema of a definition's arguments, under the name its format gives it. */
const ArgumentsSchema = () =>
  ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'JSON Schema of the arguments, showing only the parameters the LLM may set',
  });

export class OpenAIFunction extends FunctionBasic {
  @ArgumentsSchema()
  parameters: Record<string, unknown>;
}

/** The `type` of the OpenAI formats' tools. */
class FunctionTool {
  @ApiProperty({ enum: ['function'], example: 'function' })
  type: 'function';
}

/** The OpenAI tool format: `{"type": "function", "function": {...}}`. */
export class OpenAIFunctionDefinition extends FunctionTool {
  @ApiProperty({ type: OpenAIFunction })
  function: OpenAIFunction;
}

export class AnthropicFunctionDefinition extends FunctionBasic {
  @ArgumentsSchema()
  input_schema: Record<string, unknown>;
}

/** The OpenAI Responses API tool format: `{"type": "function", name, description, parameters}`. */
export class OpenAIResponsesFunctionDefinition extends IntersectionType(FunctionTool, OpenAIFunction) {}

/**
 * One search result as the OpenAPI document describes it: every field of the four shapes in one object, so
 * that a client generated from the document reads `name` of a default (FunctionBasic) result without
 * narrowing a union; which fields come depends on `format`, as each field says.
 */
export class FunctionSearchResult {
  @ApiPropertyOptional({
    example: 'GITHUB__CREATE_ISSUE',
    description: 'The function name: in every format but `openai` (there it is `function.name`)',
  })
  name?: string;

  @ApiPropertyOptional({
    example: 'Create an issue in a repository',
    description: 'In every format but `openai` (there it is `function.description`)',
  })
  description?: string;

  @ApiPropertyOptional({ enum: ['function'], description: 'Formats `openai` and `openai_responses`' })
  type?: 'function';

  @ApiPropertyOptional({ type: OpenAIFunction, description: 'Format `openai` only' })
  function?: OpenAIFunction;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Format `openai_responses`: JSON Schema of the arguments the LLM may set',
  })
  parameters?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Format `anthropic`: JSON Schema of the arguments the LLM may set',
  })
  input_schema?: Record<string, unknown>;
}

export type FunctionDefinition =
  FunctionBasic | OpenAIFunctionDefinition | OpenAIResponsesFunctionDefinition | AnthropicFunctionDefinition;

/** A catalogue function as stored (ACI's FunctionDetails), for the app details and the function list. */
export class FunctionDetails {
  @ApiProperty({
    format: 'uuid',
    description: 'Stable id derived from the function name (UUID v5): the same on every instance and database',
  })
  id: string;

  @ApiProperty({ example: 'GITHUB' })
  app_name: string;

  @ApiProperty({ example: 'GITHUB__CREATE_ISSUE' })
  name: string;

  @ApiProperty({ example: 'Create an issue in a repository' })
  description: string;

  @ApiProperty({ type: [String] })
  tags: string[];

  @ApiProperty({ enum: ['public', 'private'], description: 'Always `public`: private functions are not shown' })
  visibility: 'public' | 'private';

  @ApiProperty({ description: 'Always true: inactive functions are not shown' })
  active: boolean;

  @ApiProperty({ enum: ['rest', 'connector', 'mcp'] })
  protocol: FunctionProtocol;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'For `rest`: `{method, path, server_url}`; for `mcp` (a tool of a remote MCP server): `{server_url, tool, annotations}`',
  })
  protocol_data: Record<string, unknown>;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'The whole parameter schema as the catalogue has it, including the `visible` lists and the parameters an ' +
      'LLM is not shown (the definition endpoint gives the part an LLM sees)',
  })
  parameters: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true })
  response: Record<string, unknown>;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}
