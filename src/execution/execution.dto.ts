import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  OptionalBoolean,
  OptionalDateTime,
  OptionalInt,
  OptionalObject,
  OptionalString,
  RequiredString,
} from '../../libs/common/src/index.js';
import { OWNER_ID_MAX_LENGTH as OWNER_ID_MAX } from '../linked-accounts/owner-id.js';

export class FunctionExecute {
  @OptionalObject({
    nullable: true,
    description: "The function's input, as its definition describes (only the parameters an LLM may set)",
    example: { path: { owner: 'octocat', repo: 'hello-world' }, body: { title: 'Found a bug' } },
  })
  function_input?: Record<string, unknown> | null;

  @RequiredString({
    description: 'Owner of the linked account to execute as (the id given when the account was linked)',
    maxLength: OWNER_ID_MAX,
    example: 'user-42',
  })
  linked_account_owner_id: string;
}

export class FunctionExecutionResult {
  @ApiProperty({ description: 'Whether the function ran and its upstream answered with success' })
  success: boolean;

  @ApiPropertyOptional({
    description: 'On success, what the function returned: parsed JSON, text when not JSON, {} when empty',
    nullable: true,
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
    ],
    example: { id: 1347, title: 'Found a bug' },
  })
  data?: unknown;

  @ApiPropertyOptional({
    type: String,
    description: 'On failure, what went wrong (for an upstream error: its HTTP status and body)',
    nullable: true,
    example: 'Upstream answered HTTP 404: {"message":"Not Found"}',
  })
  error?: string | null;
}

export class ListExecutionsQuery {
  @OptionalString({ description: 'Only executions of this function', example: 'GITHUB__CREATE_ISSUE' })
  function_name?: string;

  @OptionalString({ description: 'Only executions of functions of this app', example: 'GITHUB' })
  app_name?: string;

  @OptionalString({ description: 'Only executions for this linked-account owner', maxLength: OWNER_ID_MAX })
  linked_account_owner_id?: string;

  @OptionalBoolean({ description: 'Only successful (true) or failed (false) executions' })
  success?: boolean;

  @OptionalDateTime({
    description: 'Only executions that started at or after this time (RFC 3339 date-time)',
    example: '2025-06-03T00:00:00Z',
  })
  since?: string;

  @OptionalInt({ description: 'Maximum executions per response', default: 100, min: 1, max: 1000 })
  limit: number = 100;

  @OptionalInt({ description: 'Number of executions to skip', default: 0, min: 0 })
  offset: number = 0;
}

export class ExecutionPublic {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'GITHUB' })
  app_name: string;

  @ApiProperty({ example: 'GITHUB__CREATE_ISSUE' })
  function_name: string;

  @ApiProperty({ example: 'user-42' })
  linked_account_owner_id: string;

  @ApiProperty()
  success: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'HTTP status of the last upstream answer; null for connectors and when none came',
    example: 201,
  })
  upstream_status: number | null;

  @ApiProperty({ type: 'integer', description: 'Time the execution took, in milliseconds', example: 184 })
  duration_ms: number;

  @ApiProperty({ type: String, nullable: true, description: 'The error returned to the caller, if any' })
  error: string | null;

  @ApiProperty({ format: 'date-time', description: 'When the execution started' })
  created_at: string;

  @ApiProperty({
    enum: ['rest', 'mcp'],
    description: 'Where the call came from: `rest` (POST /v1/functions/{function_name}/execute) or `mcp` (/v1/mcp)',
    example: 'rest',
  })
  source: 'rest' | 'mcp';

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'The owner-scoped MCP token the call was made with, if any',
  })
  mcp_token_id: string | null;
}
