import { ApiProperty } from '@nestjs/swagger';
import { OptionalString, RequiredString } from '../../libs/common/src/index.js';

export const DEFAULT_SCOPES = 'openid';
export const DEFAULT_OWNER_CLAIM = 'sub';

export class IdentityProviderSet {
  @RequiredString({
    description:
      'Issuer of the OpenID Connect provider your users sign in with (its discovery document is at ' +
      '`<issuer>/.well-known/openid-configuration`); https, or http on a loopback address',
    minLength: 1,
    maxLength: 2048,
    example: 'https://accounts.example.com',
  })
  issuer: string;

  @RequiredString({ description: 'Client id Patchbay signs in with', minLength: 1, maxLength: 512 })
  client_id: string;

  @RequiredString({
    description: 'Client secret; stored encrypted and never shown again',
    minLength: 1,
    maxLength: 2048,
  })
  client_secret: string;

  @OptionalString({
    description: 'Space-separated scopes to request (`openid` is always added)',
    maxLength: 1024,
    example: 'openid email profile',
  })
  scopes?: string;

  @OptionalString({
    description: 'The ID-token claim that becomes the linked_account_owner_id (`sub` by default; e.g. `email`)',
    minLength: 1,
    maxLength: 255,
    example: 'email',
  })
  owner_claim?: string;
}

export class IdentityProviderPublic {
  @ApiProperty({ example: 'https://accounts.example.com' })
  issuer: string;

  @ApiProperty()
  client_id: string;

  @ApiProperty({ description: 'Always masked', example: '****' })
  client_secret: string;

  @ApiProperty({ example: 'openid email' })
  scopes: string;

  @ApiProperty({ example: 'email' })
  owner_claim: string;

  @ApiProperty({
    description:
      'The address to paste into MCP clients (Claude, ChatGPT, VS Code, Cursor…): they sign users in by OAuth',
    example: 'https://patchbay.example.com/v1/mcp/p/6f1c0d5e-2b8a-4c1e-9d3f-0a7b5c2e4f10',
  })
  mcp_url: string;

  @ApiProperty({
    description: 'The redirect URI to register with the identity provider for this client',
    example: 'https://patchbay.example.com/v1/mcp/p/6f1c0d5e-2b8a-4c1e-9d3f-0a7b5c2e4f10/sign-in/callback',
  })
  redirect_uri: string;
}
