import { ApiProperty } from '@nestjs/swagger';
import {
  OptionalBoolean,
  OptionalInt,
  OptionalQueryStringArray,
  OptionalString,
  RequiredString,
} from '../../libs/common/src/index.js';
import { FunctionBasic } from '../functions/functions.dto.js';

export class SearchAppsQuery {
  @OptionalString({
    description: 'Natural-language intent; results are sorted by relevance to it',
    example: 'manage my calendar',
  })
  intent?: string;

  @OptionalBoolean({ description: 'Only apps that the caller project has configured', default: false })
  configured_only: boolean = false;

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

export class AppNamePath {
  @RequiredString({ description: 'App name', example: 'GITHUB' })
  app_name: string;
}

export class AppBasic {
  @ApiProperty({ example: 'GITHUB' })
  name: string;

  @ApiProperty({ example: 'Code hosting: repositories, issues and pull requests' })
  description: string;
}

export class AppBasicWithFunctions {
  @ApiProperty({ example: 'GITHUB' })
  name: string;

  @ApiProperty({ example: 'Code hosting: repositories, issues and pull requests' })
  description: string;

  @ApiProperty({ type: [FunctionBasic], description: 'The visible functions of the app, ordered by name' })
  functions: FunctionBasic[];
}
