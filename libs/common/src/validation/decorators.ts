import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import { isDateTime } from './date-time.js';
import { encodeIssue } from './issue.js';

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

const missing = () => IsDefined({ message: encodeIssue('missing', 'Field required') });
const stringType = () => IsString({ message: encodeIssue('string_type', 'Input should be a valid string') });
const nullableOptional = () => IsOptional();

interface Described {
  description: string;
  example?: unknown;
}

/** A query or body boolean; the query forms true/false/1/0/yes/no/on/off are accepted. */
export function OptionalBoolean(options: Described & { default?: boolean; nullable?: boolean }): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: Boolean,
      description: options.description,
      default: options.default,
      nullable: options.nullable,
    }),
    Transform(({ value }: { value: unknown }) => toBoolean(value)),
    nullableOptional(),
    IsBoolean({ message: encodeIssue('bool_parsing', 'Input should be a valid boolean, unable to interpret input') }),
  );
}

export function RequiredBoolean(options: Described): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ type: Boolean, description: options.description, example: options.example }),
    Transform(({ value }: { value: unknown }) => toBoolean(value)),
    missing(),
    IsBoolean({ message: encodeIssue('bool_parsing', 'Input should be a valid boolean, unable to interpret input') }),
  );
}

function toBoolean(value: unknown): unknown {
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) {
      return true;
    }
    if (FALSE_WORDS.has(word)) {
      return false;
    }
  }
  return value;
}

/**
 * Without its own `max`, an integer is bounded by PostgreSQL's `integer`: every integer input has a
 * declared maximum, and none can reach the database as a number it cannot hold (or that a double rounds).
 */
export const DEFAULT_INT_MAX = 2_147_483_647;

/** An integer in the query, parsed from its text; out-of-range values name the bound. */
export function OptionalInt(
  options: Described & { default?: number; min?: number; max?: number; nullable?: boolean },
): PropertyDecorator {
  const max = options.max ?? DEFAULT_INT_MAX;
  const decorators: PropertyDecorator[] = [
    ApiPropertyOptional({
      type: 'integer',
      description: options.description,
      default: options.default,
      minimum: options.min,
      maximum: max,
      ...(options.nullable ? { nullable: true } : {}),
    }),
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value,
    ),
    nullableOptional(),
    IsInt({
      message: encodeIssue('int_parsing', 'Input should be a valid integer, unable to parse string as an integer'),
    }),
    Max(max, { message: encodeIssue('less_than_equal', `Input should be less than or equal to ${max}`) }),
  ];
  if (options.min !== undefined) {
    decorators.push(
      Min(options.min, {
        message: encodeIssue('greater_than_equal', `Input should be greater than or equal to ${options.min}`),
      }),
    );
  }
  return applyDecorators(...decorators);
}

interface StringOptions extends Described {
  maxLength?: number;
  minLength?: number;
  nullable?: boolean;
}

function stringConstraints(options: StringOptions): PropertyDecorator[] {
  const decorators: PropertyDecorator[] = [stringType()];
  if (options.minLength !== undefined) {
    decorators.push(
      MinLength(options.minLength, {
        message: encodeIssue('string_too_short', `String should have at least ${options.minLength} character(s)`),
      }),
    );
  }
  if (options.maxLength !== undefined) {
    decorators.push(
      MaxLength(options.maxLength, {
        message: encodeIssue('string_too_long', `String should have at most ${options.maxLength} characters`),
      }),
    );
  }
  return decorators;
}

export function RequiredString(options: StringOptions): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: String,
      description: options.description,
      example: options.example,
      maxLength: options.maxLength,
      minLength: options.minLength,
    }),
    missing(),
    ...stringConstraints(options),
  );
}

export function OptionalString(options: StringOptions): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: String,
      description: options.description,
      example: options.example,
      maxLength: options.maxLength,
      nullable: options.nullable,
    }),
    nullableOptional(),
    ...stringConstraints(options),
  );
}

/** A path or body UUID. */
export function RequiredUuid(options: Described): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ type: String, format: 'uuid', description: options.description }),
    missing(),
    IsUUID('all', { message: encodeIssue('uuid_parsing', 'Input should be a valid UUID') }),
  );
}

function enumMessage(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  const list = quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}` : quoted[0];
  return `Input should be ${list}`;
}

export function RequiredEnum(values: readonly string[], options: Described & { enumName: string }): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ enum: values, enumName: options.enumName, description: options.description }),
    missing(),
    IsIn(values as string[], { message: encodeIssue('enum', enumMessage(values)) }),
  );
}

export function OptionalEnum(
  values: readonly string[],
  options: Described & { enumName: string; default?: string; nullable?: boolean },
): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      enum: values,
      enumName: options.enumName,
      description: options.description,
      default: options.default,
      nullable: options.nullable,
    }),
    nullableOptional(),
    IsIn(values as string[], { message: encodeIssue('enum', enumMessage(values)) }),
  );
}

/** A JSON object (dictionary); arrays and scalars are rejected. */
export function OptionalObject(options: Described & { nullable?: boolean }): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'object',
      additionalProperties: true,
      description: options.description,
      nullable: options.nullable,
      example: options.example,
    }),
    nullableOptional(),
    IsObject({ message: encodeIssue('dict_type', 'Input should be a valid dictionary') }),
  );
}

/**
 * An array of strings. In the query a single value arrives as a string and repeated keys as an
 * array; both become an array. Elements that are not strings are reported with their index.
 */
export function OptionalStringArray(options: Described & { nullable?: boolean }): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: [String],
      description: options.description,
      nullable: options.nullable,
      example: options.example,
    }),
    nullableOptional(),
    IsStringArray(),
  );
}

/** Query form of `OptionalStringArray`: a lone value becomes a one-element array. */
export function OptionalQueryStringArray(options: Described): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? [value] : value)),
    OptionalStringArray(options),
  );
}

function IsStringArray(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isStringArray',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string'),
        defaultMessage: (args?: ValidationArguments) => {
          const value: unknown = args?.value;
          if (!Array.isArray(value)) {
            return encodeIssue('list_type', 'Input should be a valid list');
          }
          const index = value.findIndex((v) => typeof v !== 'string');
          return encodeIssue('string_type', 'Input should be a valid string', index);
        },
      },
    });
  };
}

/**
 * Two names for one choice (a current name and an older one): when both are given they must say the
 * same thing. Reported on the decorated property, naming both.
 */
export function AgreesWith(other: string): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'agreesWith',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      validator: {
        validate: (value: unknown, args?: ValidationArguments) => {
          const given = (args?.object as Record<string, unknown> | undefined)?.[other];
          return value === undefined || value === null || given === undefined || given === null || given === value;
        },
        defaultMessage: (args?: ValidationArguments) => {
          const given = String((args?.object as Record<string, unknown> | undefined)?.[other]);
          return encodeIssue(
            'value_error',
            `${String(propertyName)}=${String(args?.value)} disagrees with ${other}=${given}: give one of them, or the same value`,
          );
        },
      },
    });
  };
}

/** An RFC 3339 date-time (OpenAPI `format: date-time`), kept as its text; `parseDateTime` gives the instant. */
export function OptionalDateTime(options: Described): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: String,
      format: 'date-time',
      description: options.description,
      example: options.example,
    }),
    nullableOptional(),
    stringType(),
    (target: object, propertyName: string | symbol) => {
      registerDecorator({
        name: 'isDateTime',
        target: target.constructor,
        propertyName: propertyName as string,
        validator: {
          validate: (value: unknown) => isDateTime(value),
          defaultMessage: () =>
            encodeIssue('datetime_parsing', 'Input should be a valid RFC 3339 date-time (e.g. 2025-06-03T00:00:00Z)'),
        },
      });
    },
  );
}

/** validator.js's default `max_allowed_length` for URLs, declared so the document says what is refused. */
const URL_MAX_LENGTH = 2084;

/**
 * An absolute http or https URL. The OpenAPI schema carries the same rule (`format: uri`, the scheme as
 * a pattern, the length bound) so that clients can check before sending.
 */
export function OptionalHttpUrl(options: Described): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ ...httpUrlSchema, description: options.description, example: options.example }),
    nullableOptional(),
    ...httpUrlConstraints(),
  );
}

/** The same, required. */
export function RequiredHttpUrl(options: Described): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ ...httpUrlSchema, description: options.description, example: options.example }),
    missing(),
    ...httpUrlConstraints(),
  );
}

const httpUrlSchema = { type: String, format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: URL_MAX_LENGTH };

function httpUrlConstraints(): PropertyDecorator[] {
  return [
    stringType(),
    IsUrl(
      { protocols: ['http', 'https'], require_protocol: true, require_tld: false, max_allowed_length: URL_MAX_LENGTH },
      { message: encodeIssue('url_parsing', 'Input should be a valid http or https URL') },
    ),
  ];
}
