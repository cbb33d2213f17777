import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  OptionalBoolean,
  OptionalInt,
  OptionalQueryStringArray,
  OptionalString,
  RequiredString,
} from '../../libs/common/src/index.js';
import { FunctionBasic, FunctionDetails } from '../functions/functions.dto.js';
import { SECURITY_SCHEMES, type SecurityScheme } from './security-scheme.js';

export class SearchAppsQuery {
  @OptionalString({
    description: 'Natural-language intent; results are sorted by relevance to it',
    example: 'manage my calendar',
  })
  intent?: string;

  @OptionalBoolean({ description: 'Only apps that the caller project has configured', default: false })
  configured_only: boolean = false;

  @OptionalBoolean({ description: "ACI's name for `configured_only`; same meaning", default: false })
  allowed_apps_only: boolean = false;

  @OptionalBoolean({
    description: "Add each app's visible functions (`name`, `description`) as `functions`",
    default: false,
  })
  include_functions: boolean = false;

  @OptionalQueryStringArray({
    description: 'Only apps in any of these categories (repeat the key for several)',
    example: ['Productivity'],
  })
  categories?: string[];

  @OptionalInt({ description: 'Maximum number of apps in the response', default: 100, min: 1, max: 1000 })
  limit: number = 100;

  @OptionalInt({ description: 'Number of apps to skip', default: 0, min: 0 })
  offset: number = 0;
}

export class ListAppsQuery {
  @OptionalQueryStringArray({ description: 'Only these apps (repeat the key for several)', example: ['GITHUB'] })
  app_names?: string[];

  @OptionalInt({ description: 'Maximum number of apps in the response', default: 100, min: 1, max: 1000 })
  limit: number = 100;

  @OptionalInt({ description: 'Number of apps to skip', default: 0, min: 0 })
  offset: number = 0;
}

export class AppNamePath {
  @RequiredString({ description: 'App name', example: 'GITHUB' })
  app_name: string;
}

export class AppBasic {
  @ApiProperty({ example: 'GITHUB' })
  name: string;

  @ApiProperty({ example: 'Code hosting: repositories, issues and pull requests' })
  description: string;

  @ApiPropertyOptional({
    type: [FunctionBasic],
    description: 'With `include_functions=true` only: the visible functions of the app, ordered by name',
  })
  functions?: FunctionBasic[];
}

/** What a client may know of each scheme an app supports: never a client secret or credential. */
export class SecuritySchemesPublic {
  @ApiPropertyOptional({ type: 'object', properties: {}, description: 'Present when the app supports it' })
  no_auth?: Record<string, never>;

  @ApiPropertyOptional({ type: 'object', properties: {}, description: 'Present when the app supports it' })
  api_key?: Record<string, never>;

  @ApiPropertyOptional({ type: 'object', properties: {}, description: 'Present when the app supports it' })
  http_basic?: Record<string, never>;

  @ApiPropertyOptional({ type: 'object', properties: {}, description: 'Present when the app supports it' })
  http_bearer?: Record<string, never>;

  @ApiPropertyOptional({
    type: 'object',
    properties: { scope: { type: 'string', description: "Space-separated scopes of the app's OAuth 2.0 client" } },
    required: ['scope'],
    description: 'Present when the app supports it: the scopes a project needs in its own OAuth 2.0 client',
  })
  oauth2?: { scope: string };
}

/**
 * An app with its visible functions in detail: the contract's AppBasicWithFunctions (`name`,
 * `description`, `functions`) plus the fields of ACI's current AppDetails.
 */
export class AppDetails {
  @ApiProperty({
    format: 'uuid',
    description: 'Stable id derived from the app name (UUID v5): the same on every instance and database',
  })
  id: string;

  @ApiProperty({ example: 'GITHUB' })
  name: string;

  @ApiProperty({ example: 'GitHub' })
  display_name: string;

  @ApiProperty({ example: 'GitHub, Inc.' })
  provider: string;

  @ApiProperty({ example: '1.0.0' })
  version: string;

  @ApiProperty({ example: 'Code hosting: repositories, issues and pull requests' })
  description: string;

  @ApiProperty({ type: String, nullable: true, description: 'Address of the logo, or null when there is none' })
  logo: string | null;

  @ApiProperty({ type: [String], example: ['Developer Tools'] })
  categories: string[];

  @ApiProperty({ enum: ['public', 'private'], description: 'Always `public`: private apps are not shown' })
  visibility: 'public' | 'private';

  @ApiProperty({ description: 'Always true: inactive apps are not shown' })
  active: boolean;

  @ApiProperty({ enum: SECURITY_SCHEMES, enumName: 'SecurityScheme', isArray: true, description: 'Supported schemes' })
  security_schemes: SecurityScheme[];

  @ApiProperty({ type: SecuritySchemesPublic })
  supported_security_schemes: SecuritySchemesPublic;

  @ApiProperty({ type: [FunctionDetails], description: 'The visible functions of the app, ordered by name' })
  functions: FunctionDetails[];

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;
}

/** The fields a project's use of an app begins with on the wire: an app configuration, a linked account. */
export class AppUsePublic {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  project_id: string;

  @ApiProperty({ example: 'GITHUB' })
  app_name: string;
}
