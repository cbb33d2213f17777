import { ApiProperty } from '@nestjs/swagger';
import {
  OptionalBoolean,
  OptionalEnum,
  OptionalInt,
  OptionalQueryStringArray,
  OptionalString,
  RequiredString,
} from '../../libs/common/src/index.js';

export const INFERENCE_PROVIDERS = ['openai', 'anthropic'] as const;
export type InferenceProvider = (typeof INFERENCE_PROVIDERS)[number];

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
  @OptionalEnum(INFERENCE_PROVIDERS, {
    enumName: 'InferenceProvider',
    description: 'Decides the format of the definition (default `openai`)',
    default: 'openai',
  })
  inference_provider: InferenceProvider = 'openai';
}

export class FunctionBasic {
  @ApiProperty({ example: 'GITHUB__CREATE_ISSUE' })
  name: string;

  @ApiProperty({ example: 'Create an issue in a repository' })
  description: string;
}

export class OpenAIFunction {
  @ApiProperty({ example: 'GITHUB__CREATE_ISSUE' })
  name: string;

  @ApiProperty({ example: 'Create an issue in a repository' })
  description: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'JSON Schema of the arguments, showing only the parameters the LLM may set',
  })
  parameters: Record<string, unknown>;
}

/** The OpenAI tool format: `{"type": "function", "function": {...}}`. */
export class OpenAIFunctionDefinition {
  @ApiProperty({ enum: ['function'], example: 'function' })
  type: 'function';

  @ApiProperty({ type: OpenAIFunction })
  function: OpenAIFunction;
}

export class AnthropicFunctionDefinition {
  @ApiProperty({ example: 'GITHUB__CREATE_ISSUE' })
  name: string;

  @ApiProperty({ example: 'Create an issue in a repository' })
  description: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'JSON Schema of the arguments, showing only the parameters the LLM may set',
  })
  input_schema: Record<string, unknown>;
}

export type FunctionDefinition = OpenAIFunctionDefinition | AnthropicFunctionDefinition;
