import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUrl } from 'class-validator';
import { encodeIssue, OptionalInt, OptionalString, RequiredString, RequiredUuid } from '../../libs/common/src/index.js';
import { RequiredOwnerId } from '../linked-accounts/owner-id.js';

export const CONNECT_LINK_STATUSES = ['pending', 'completed', 'expired', 'revoked'] as const;
export type ConnectLinkStatus = (typeof CONNECT_LINK_STATUSES)[number];

export const EXPIRES_DEFAULT_SECONDS = 1800;
export const EXPIRES_MIN_SECONDS = 60;
export const EXPIRES_MAX_SECONDS = 7 * 24 * 3600;

const httpUrl = () =>
  IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: encodeIssue('url_parsing', 'Input should be a valid http or https URL') },
  );

export class ConnectLinkCreate {
  @RequiredString({ description: 'Name of the configured app', example: 'GITHUB' })
  app_name: string;

  @RequiredOwnerId('Id of the owner of the account to link (e.g. the end user of the caller)')
  linked_account_owner_id: string;

  @OptionalString({
    description:
      'How the page names the end user (e.g. their name or email address in your app), instead of ' +
      'linked_account_owner_id, which the page then never shows',
    minLength: 1,
    maxLength: 255,
    example: 'Alice Martin',
  })
  owner_display_name?: string;

  @httpUrl()
  @OptionalString({
    description:
      'Where the browser is sent after linking, with `linked_account_id` and `status=success` appended. Its ' +
      'origin must be that of PUBLIC_BASE_URL or listed in OAUTH2_REDIRECT_ALLOWED_ORIGINS. Without it the ' +
      'page shows a confirmation.',
    example: 'https://app.example.com/settings/integrations',
  })
  after_link_redirect_url?: string;

  @httpUrl()
  @OptionalString({
    description:
      'Where Patchbay POSTs `connect_link.completed` / `connect_link.failed` events, signed with ' +
      '`X-Patchbay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with webhook_secret>` ' +
      'and retried with exponential backoff. Same origin rule as after_link_redirect_url.',
    example: 'https://app.example.com/hooks/patchbay',
  })
  webhook_url?: string;

  @OptionalInt({
    description: 'Lifetime of the link in seconds',
    default: EXPIRES_DEFAULT_SECONDS,
    min: EXPIRES_MIN_SECONDS,
    max: EXPIRES_MAX_SECONDS,
  })
  expires_in_seconds: number = EXPIRES_DEFAULT_SECONDS;
}

export class ConnectLinkIdParams {
  @RequiredUuid({ description: 'Id of the connect link' })
  connect_link_id: string;
}

export class ConnectLinkCreated {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({
    description: 'The page to hand to the end user; it carries a single-use secret token, so treat it as a secret',
    example: 'https://patchbay.example.com/connect/0b0e…?token=…',
  })
  url: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  @ApiPropertyOptional({
    description: 'Only when webhook_url was given: the key of the webhook signatures, shown once',
  })
  webhook_secret?: string;
}

export class ConnectLinkPublic {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'GITHUB' })
  app_name: string;

  @ApiProperty({ example: 'user-42' })
  linked_account_owner_id: string;

  @ApiPropertyOptional({ description: 'The display name given at creation, if any', example: 'Alice Martin' })
  owner_display_name?: string;

  @ApiProperty({ enum: CONNECT_LINK_STATUSES, enumName: 'ConnectLinkStatus' })
  status: ConnectLinkStatus;

  @ApiPropertyOptional({ format: 'uuid', description: 'The linked account, once completed' })
  linked_account_id?: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}
