import { ApiProperty } from '@nestjs/swagger';
import { OptionalInt, OptionalStringArray, RequiredUuid } from '../../libs/common/src/index.js';
import { RequiredOwnerId } from '../linked-accounts/owner-id.js';
import { TOKEN_TTL_DEFAULT_S } from '../mcp-oauth/mcp-token.entity.js';

export const TOKEN_TTL_MAX_S = 365 * 24 * 3600;

export class McpTokenCreate {
  @RequiredOwnerId('The linked-account owner the token acts for; no request made with the token can change it')
  linked_account_owner_id: string;

  @OptionalStringArray({
    description: 'Only these apps (each configured in the project); every configured app when absent',
    example: ['GITHUB', 'GMAIL'],
  })
  apps?: string[];

  @OptionalInt({
    description: 'Lifetime in seconds (default 30 days, at most one year)',
    default: TOKEN_TTL_DEFAULT_S,
    min: 60,
    max: TOKEN_TTL_MAX_S,
  })
  expires_in_seconds?: number;
}

export class McpTokenCreated {
  @ApiProperty({ format: 'uuid', description: 'Id of the token (to revoke it; shown in the execution log)' })
  id: string;

  @ApiProperty({
    description: 'The token, shown only now: send it as `Authorization: Bearer <token>` to `url`',
    example: 'pbm_Q2hhbmdlIG1lIHRvIGEgcmVhbCB0b2tlbi4uLg',
  })
  token: string;

  @ApiProperty({
    description: 'The MCP endpoint (Streamable HTTP) to give the MCP client',
    example: 'https://patchbay.example.com/v1/mcp',
  })
  url: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  @ApiProperty({ example: 'user-42' })
  linked_account_owner_id: string;

  @ApiProperty({ type: [String], nullable: true, description: 'Apps the token is limited to; null for all' })
  apps: string[] | null;
}

/** A token as listed: never the token itself. */
export class McpTokenPublic {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'user-42' })
  linked_account_owner_id: string;

  @ApiProperty({ type: [String], nullable: true, description: 'Apps the token is limited to; null for all' })
  apps: string[] | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'For a token an MCP client obtained by signing the user in (OAuth): the client_name it registered with ' +
      '(its address when it gave none); null for a token created with POST /v1/mcp/tokens',
    example: 'Claude',
  })
  client_name: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The OAuth client_id of that MCP client; null likewise' })
  client_id: string | null;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class McpTokenPath {
  @RequiredUuid({ description: 'Id of the MCP token' })
  id: string;
}

export class JsonRpcErrorObject {
  @ApiProperty({ description: 'JSON-RPC error code (-32600 invalid request, -32001 unauthorised or unknown session…)' })
  code: number;

  @ApiProperty({ description: 'What went wrong' })
  message: string;
}

/** How /v1/mcp refuses a request at the HTTP level: a JSON-RPC error with no id. */
export class JsonRpcErrorResponse {
  @ApiProperty({ enum: ['2.0'] })
  jsonrpc: '2.0';

  @ApiProperty({ type: JsonRpcErrorObject })
  error: JsonRpcErrorObject;

  @ApiProperty({
    description: 'Always null: a refusal is answered before any request id is read',
    type: 'string',
    nullable: true,
  })
  id: null;
}
