import { ApiProperty } from '@nestjs/swagger';
import { OptionalBoolean, OptionalString, RequiredString, RequiredUuid } from '../../libs/common/src/index.js';
import { AppUsePublic } from '../apps/apps.dto.js';
import { SECURITY_SCHEMES, type SecurityScheme } from '../apps/security-scheme.js';
import { OWNER_ID_MAX_LENGTH as OWNER_ID_MAX, RequiredOwnerId } from './owner-id.js';

export class LinkedAccountNoAuthCreate {
  @RequiredString({ description: 'Name of the configured app', example: 'HACKERNEWS' })
  app_name: string;

  @RequiredOwnerId('Id of the owner of the linked account (e.g. the end user of the caller)')
  linked_account_owner_id: string;
}

export class LinkedAccountAPIKeyCreate extends LinkedAccountNoAuthCreate {
  @RequiredString({ description: 'API key at the provider; stored encrypted, never returned', minLength: 1 })
  api_key: string;
}

export class LinkedAccountHTTPBasicCreate extends LinkedAccountNoAuthCreate {
  @RequiredString({ description: 'User name at the provider', minLength: 1 })
  username: string;

  @RequiredString({ description: 'Password at the provider; stored encrypted, never returned' })
  password: string;
}

export class LinkedAccountHTTPBearerCreate extends LinkedAccountNoAuthCreate {
  @RequiredString({ description: 'Bearer token at the provider; stored encrypted, never returned', minLength: 1 })
  token: string;
}

export class LinkedAccountUpdate {
  @OptionalBoolean({ description: 'Enable or disable the linked account; absent or null leaves it', nullable: true })
  enabled?: boolean | null;
}

export class LinkedAccountsListQuery {
  @OptionalString({ description: 'Only linked accounts of this app' })
  app_name?: string;

  @OptionalString({ description: 'Only linked accounts of this owner', maxLength: OWNER_ID_MAX })
  linked_account_owner_id?: string;
}

export class LinkedAccountIdParams {
  @RequiredUuid({ description: 'Id of the linked account' })
  linked_account_id: string;
}

export class LinkedAccountPublic extends AppUsePublic {
  @ApiProperty({ example: 'user-42' })
  linked_account_owner_id: string;

  @ApiProperty({ enum: SECURITY_SCHEMES, enumName: 'SecurityScheme', description: 'How the account authenticates' })
  security_scheme: SecurityScheme;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}
