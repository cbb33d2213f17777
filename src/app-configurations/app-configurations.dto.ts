import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, registerDecorator, ValidateNested } from 'class-validator';
import {
  encodeIssue,
  OptionalBoolean,
  OptionalEnum,
  OptionalHttpUrl,
  OptionalInt,
  OptionalQueryStringArray,
  OptionalString,
  OptionalStringArray,
  RequiredEnum,
  RequiredString,
} from '../../libs/common/src/index.js';
import { AppUsePublic } from '../apps/apps.dto.js';
import { SECURITY_SCHEMES, type SecurityScheme } from '../apps/security-scheme.js';

/** Schemes whose settings a project may override; the others have nothing project-specific to set. */
export const OVERRIDABLE_SCHEMES = ['oauth2'] as const;

/** What every response shows in place of a stored client secret. */
export const MASKED_SECRET = '****';

const dictType = () => IsObject({ message: encodeIssue('dict_type', 'Input should be a valid dictionary') });

/** Refuses keys other than `allowed`, naming them, rather than silently dropping a misspelt scheme. */
function OnlyKeys(allowed: readonly string[]): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    const unknownKeys = (value: unknown) =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? Object.keys(value).filter((key) => !allowed.includes(key))
        : [];
    registerDecorator({
      name: 'onlyKeys',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => unknownKeys(value).length === 0,
        defaultMessage: (args) =>
          encodeIssue(
            'extra_forbidden',
            `Unknown security scheme(s) in overrides: ${unknownKeys(args?.value).join(', ')}; ` +
              `overrides are supported for: ${allowed.join(', ')}`,
          ),
      },
    });
  };
}

export class OAuth2Overrides {
  @RequiredString({ description: 'OAuth 2.0 client id of the project at the provider', minLength: 1 })
  client_id: string;

  @RequiredString({
    description: 'OAuth 2.0 client secret; stored encrypted and only ever returned masked',
    minLength: 1,
  })
  client_secret: string;

  @OptionalHttpUrl({ description: 'Redirect (callback) URL registered with the provider; http or https' })
  redirect_url?: string;

  @OptionalString({ description: 'Space-separated scopes to request instead of the app default' })
  scope?: string;
}

export class SecuritySchemeOverrides {
  @ApiPropertyOptional({ type: OAuth2Overrides, description: 'Overrides of the app OAuth 2.0 client' })
  @IsOptional()
  @dictType()
  @ValidateNested()
  @Type(() => OAuth2Overrides)
  oauth2?: OAuth2Overrides;
}

/**
 * The overrides object of create and update. Keys are security schemes; only `oauth2` is accepted
 * and any other key is refused with 422 `extra_forbidden`.
 */
function OverridesField(options: { nullable?: boolean; description: string }): PropertyDecorator {
  return applyDecorators(
    // Inline rather than a referenced class, so that the document says other keys are refused
    // (OAuth2Overrides is registered by the controller).
    ApiPropertyOptional({
      type: 'object',
      properties: {
        oauth2: {
          allOf: [{ $ref: getSchemaPath(OAuth2Overrides) }],
          description: 'Overrides of the app OAuth 2.0 client',
        },
      },
      additionalProperties: false,
      nullable: options.nullable,
      description: options.description,
    }),
    IsOptional(),
    dictType(),
    OnlyKeys(OVERRIDABLE_SCHEMES),
    ValidateNested(),
    Type(() => SecuritySchemeOverrides),
  );
}

/**
 * Values of server variables by name. That each names a variable the app's document declares, is a string and
 * is one of its `enum` is checked by the service (422 naming the variable).
 */
function ServerVariablesField(options: { nullable?: boolean; description: string }): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'object',
      additionalProperties: { type: 'string' },
      nullable: options.nullable,
      description: options.description,
      example: { region: 'eu' },
    }),
    IsOptional(),
    dictType(),
  );
}

/** Secret values by the document's scheme names; which names an app takes is checked by the service. */
function ExtraCredentialsField(options: { nullable?: boolean; description: string }): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'object',
      additionalProperties: { type: 'string', minLength: 1, maxLength: 4096 },
      nullable: options.nullable,
      description: options.description,
      example: { AppId: 'my-application-id' },
    }),
    IsOptional(),
    dictType(),
  );
}

export class AppConfigurationCreate {
  @RequiredString({ description: 'Name of the app to configure', example: 'GITHUB' })
  app_name: string;

  @RequiredEnum(SECURITY_SCHEMES, {
    enumName: 'SecurityScheme',
    description: 'Security scheme to use; must be one the app supports',
  })
  security_scheme: SecurityScheme;

  @OverridesField({
    description:
      'Per-scheme overrides of the app defaults. Only `oauth2` is supported; any other key is refused with 422 ' +
      '`extra_forbidden`.',
  })
  security_scheme_overrides?: SecuritySchemeOverrides;

  @ServerVariablesField({
    description:
      "Values of the server variables of the app's imported OpenAPI document (`https://{region}.example.com`), by " +
      'name; the others keep their defaults. Each must be a variable the document declares, one of its `enum` ' +
      'values when it has one, and a variable that chooses the host freely keeps its default unless the document ' +
      'lists values (else 422 naming it; see docs/execution.md). ACI-format apps declare none.',
  })
  server_variables?: Record<string, string>;

  @ExtraCredentialsField({
    description:
      "Credentials that an imported operation's security requirement combines with the linked account's (an API " +
      'key plus an app-id header, say), by the scheme names of the document: apiKey schemes that some function of ' +
      'the app needs beside another (else 422 naming it). Stored encrypted, only ever returned masked.',
  })
  extra_credentials?: Record<string, string>;

  @OptionalBoolean({ description: 'Whether the configuration is enabled', default: true })
  enabled?: boolean;

  @OptionalBoolean({
    description: 'When true every function of the app is enabled and `enabled_functions` is ignored',
    default: true,
  })
  all_functions_enabled?: boolean;

  @OptionalStringArray({
    description:
      'Functions to enable when `all_functions_enabled` is false; empty means none. Ignored when all are enabled.',
    example: ['GITHUB__LIST_REPOSITORIES'],
  })
  enabled_functions?: string[];

  @OptionalInt({
    description:
      "Executions one linked-account owner may have of this app per `OWNER_RATE_LIMIT_WINDOW_SECONDS` (counted apart from the owner's other apps); more get 429 with `Retry-After`. 0: no limit of its own (the service-wide `OWNER_RATE_LIMIT_EXECUTIONS` applies)",
    default: 0,
    min: 0,
  })
  owner_execution_limit?: number;
}

/** Every field optional and nullable: absent or null leaves the stored value unchanged. */
export class AppConfigurationUpdate {
  @OptionalEnum(SECURITY_SCHEMES, {
    enumName: 'SecurityScheme',
    description: 'New security scheme; must be one the app supports',
    nullable: true,
  })
  security_scheme?: SecurityScheme | null;

  @OverridesField({
    nullable: true,
    description:
      'Replaces the overrides as a whole (`{}` clears them). Only `oauth2` is supported; any other key is ' +
      'refused with 422 `extra_forbidden`.',
  })
  security_scheme_overrides?: SecuritySchemeOverrides | null;

  @ServerVariablesField({
    nullable: true,
    description:
      'Replaces the server variables as a whole (`{}` returns every variable to its default); checked as on ' +
      'create. Absent or null: unchanged',
  })
  server_variables?: Record<string, string> | null;

  @ExtraCredentialsField({
    nullable: true,
    description:
      'Replaces the extra credentials as a whole (`{}` removes them); checked as on create. Absent or null: unchanged',
  })
  extra_credentials?: Record<string, string> | null;

  @OptionalBoolean({ description: 'Enable or disable the configuration', nullable: true })
  enabled?: boolean | null;

  @OptionalBoolean({ description: 'When true every function of the app is enabled', nullable: true })
  all_functions_enabled?: boolean | null;

  @OptionalStringArray({
    description: 'Functions to enable when `all_functions_enabled` is (or stays) false',
    nullable: true,
  })
  enabled_functions?: string[] | null;

  @OptionalInt({
    description:
      "Executions one linked-account owner may have of this app per `OWNER_RATE_LIMIT_WINDOW_SECONDS` (counted apart from the owner's other apps); more get 429 with `Retry-After`. 0: no limit of its own (the service-wide `OWNER_RATE_LIMIT_EXECUTIONS` applies)" +
      '. Absent or null: unchanged',
    min: 0,
    nullable: true,
  })
  owner_execution_limit?: number | null;
}

export class AppConfigurationsListQuery {
  @OptionalQueryStringArray({ description: 'Only configurations of these apps (repeat the key for several)' })
  app_names?: string[];

  @OptionalInt({ description: 'Maximum configurations per response', default: 100, min: 1, max: 1000 })
  limit: number = 100;

  @OptionalInt({ description: 'Pagination offset', default: 0, min: 0 })
  offset: number = 0;
}

export class AppNameParams {
  @RequiredString({ description: 'Name of the configured app', example: 'GITHUB' })
  app_name: string;
}

export class OAuth2OverridesPublic {
  @ApiProperty()
  client_id: string;

  @ApiProperty({ description: `Always masked as "${MASKED_SECRET}"`, example: MASKED_SECRET })
  client_secret: string;

  @ApiPropertyOptional()
  redirect_url?: string;

  @ApiPropertyOptional()
  scope?: string;
}

export class SecuritySchemeOverridesPublic {
  @ApiPropertyOptional({ type: OAuth2OverridesPublic })
  oauth2?: OAuth2OverridesPublic;
}

export class AppConfigurationPublic extends AppUsePublic {
  @ApiProperty({ enum: SECURITY_SCHEMES, enumName: 'SecurityScheme' })
  security_scheme: SecurityScheme;

  @ApiProperty({ type: SecuritySchemeOverridesPublic, description: 'Secrets are masked' })
  security_scheme_overrides: SecuritySchemeOverridesPublic;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Values chosen for server variables, by name; `{}`: every variable at its default',
    example: { region: 'eu' },
  })
  server_variables: Record<string, string>;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: `The extra credentials set, by scheme name, each masked as "${MASKED_SECRET}"`,
    example: { AppId: MASKED_SECRET },
  })
  extra_credentials: Record<string, string>;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty()
  all_functions_enabled: boolean;

  @ApiProperty({ type: [String], description: 'Enabled functions; always empty when all functions are enabled' })
  enabled_functions: string[];

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Executions one linked-account owner may have of this app per window; null: the service default',
  })
  owner_execution_limit: number | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

export class AppConfigurationDeleted {
  @ApiProperty({ example: 'GITHUB' })
  app_name: string;

  @ApiProperty({
    type: 'integer',
    description: 'Linked accounts of the app removed with the configuration',
    example: 2,
  })
  deleted_linked_accounts: number;
}
