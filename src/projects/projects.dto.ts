import { ApiProperty } from '@nestjs/swagger';
import { Matches, registerDecorator, type ValidationArguments } from 'class-validator';
import { encodeIssue, OptionalString } from '../../libs/common/src/index.js';
import { ACCENT_COLOR, homeUrlProblem, LOGO_DATA_URL_MAX, logoUrlProblem, URL_MAX } from './project-branding.js';

/** A string checked by one of project-branding.ts's rules; its reason becomes the 422's message. */
function Satisfies(problem: (value: string) => string | null, type: string): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: `satisfies_${type}`,
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || problem(value) === null,
        defaultMessage: (args?: ValidationArguments) =>
          encodeIssue(type, `Input should be valid: ${problem(String(args?.value))}`),
      },
    });
  };
}

export class ProjectUpdate {
  @OptionalString({
    description: 'The project name (shown when display_name is not set)',
    minLength: 1,
    maxLength: 255,
  })
  name?: string;

  @OptionalString({
    description: 'The name end users know your app by, shown on the connect, linking and sign-in pages; null clears it',
    minLength: 1,
    maxLength: 100,
    nullable: true,
    example: 'Acme Assistant',
  })
  display_name?: string | null;

  @Satisfies(logoUrlProblem, 'url_parsing')
  @OptionalString({
    description:
      `Your app's logo on those pages: an https URL (the pages' Content-Security-Policy allows exactly that ` +
      `address) or a base64 data:image URL of at most ${LOGO_DATA_URL_MAX} characters; null clears it`,
    maxLength: LOGO_DATA_URL_MAX,
    nullable: true,
    example: 'https://app.example.com/logo.png',
  })
  logo_url?: string | null;

  @Matches(ACCENT_COLOR, { message: encodeIssue('string_pattern_mismatch', 'Input should be a colour as #rrggbb') })
  @OptionalString({
    description: 'The colour of the buttons on those pages, as #rrggbb; null clears it',
    nullable: true,
    example: '#6d28d9',
  })
  accent_color?: string | null;

  @Satisfies(homeUrlProblem, 'url_parsing')
  @OptionalString({
    description:
      'Your app, where every result page of those pages leads back to (unless the link or flow has its own ' +
      'return address): https, or http on a loopback address; null clears it',
    maxLength: URL_MAX,
    nullable: true,
    example: 'https://app.example.com/settings/integrations',
  })
  home_url?: string | null;
}

export class ProjectPublic {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'acme-production' })
  name: string;

  @ApiProperty({ type: String, nullable: true, example: 'Acme Assistant' })
  display_name: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'https://app.example.com/logo.png' })
  logo_url: string | null;

  @ApiProperty({ type: String, nullable: true, example: '#6d28d9' })
  accent_color: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'https://app.example.com/settings/integrations' })
  home_url: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}
