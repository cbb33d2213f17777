import { ApiProperty } from '@nestjs/swagger';
import { OptionalHttpUrl, OptionalString, RequiredString } from '../../libs/common/src/index.js';
import { RequiredOwnerId } from '../linked-accounts/owner-id.js';

export class OAuth2LinkStartQuery {
  @RequiredString({ description: 'Name of an app the project configured with oauth2', example: 'GOOGLE_CALENDAR' })
  app_name: string;

  @RequiredOwnerId('Id of the owner of the linked account (e.g. the end user of the caller)')
  linked_account_owner_id: string;

  @OptionalHttpUrl({
    description:
      'Where the browser is sent after the callback, with `linked_account_id` and `status=success` (or ' +
      '`status=error&error=…`) appended. Its origin must be that of PUBLIC_BASE_URL or listed in OAUTH2_REDIRECT_ALLOWED_ORIGINS.',
    example: 'https://app.example.com/settings/integrations',
  })
  after_oauth2_link_redirect_url?: string;
}

export class OAuth2LinkStart {
  @ApiProperty({
    description: 'Authorization address at the provider; open it in the browser of the end user',
    example: 'https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=…&state=…',
  })
  url: string;
}

/** What the provider appends to the redirect URI (RFC 6749 §4.1.2); other parameters are ignored. */
export class OAuth2CallbackQuery {
  @OptionalString({ description: 'Authorization code' })
  code?: string;

  @OptionalString({ description: 'The opaque state given at start' })
  state?: string;

  @OptionalString({ description: 'Error code when the provider refused', example: 'access_denied' })
  error?: string;

  @OptionalString({ description: 'Description of the error by the provider' })
  error_description?: string;
}
