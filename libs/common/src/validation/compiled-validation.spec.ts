import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { IsISO8601, ValidateNested, validateSync } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { ValidationPlan } from './compiled-validation.js';
import {
  OptionalBoolean,
  OptionalEnum,
  OptionalInt,
  OptionalObject,
  OptionalQueryStringArray,
  OptionalString,
  OptionalStringArray,
  RequiredBoolean,
  RequiredEnum,
  RequiredString,
  RequiredUuid,
} from './decorators.js';

class ExecuteBody {
  @OptionalObject({ description: 'input' })
  function_input?: Record<string, unknown>;

  @RequiredString({ description: 'owner', maxLength: 5 })
  owner: string;
}

class CreateBody {
  @RequiredUuid({ description: 'id' })
  id: string;

  @RequiredEnum(['api_key', 'oauth2'], { description: 'scheme', enumName: 'Scheme' })
  scheme: string;

  @OptionalEnum(['a', 'b'], { description: 'kind', enumName: 'Kind', nullable: true })
  kind?: string | null;

  @RequiredBoolean({ description: 'enabled' })
  enabled: boolean;

  @OptionalStringArray({ description: 'tags', nullable: true })
  tags?: string[] | null;

  @OptionalString({ description: 'name', minLength: 2, maxLength: 4 })
  name?: string;
}

class ExtendedBody extends CreateBody {
  @RequiredString({ description: 'key' })
  api_key: string;
}

class ListQuery {
  @OptionalString({ description: 'intent' })
  intent?: string;

  @OptionalQueryStringArray({ description: 'apps' })
  apps?: string[];

  @OptionalBoolean({ description: 'format' })
  active?: boolean;

  @IsISO8601({ strict: true })
  @OptionalString({ description: 'since' })
  since?: string;

  @OptionalInt({ description: 'limit', default: 100, min: 1, max: 1000 })
  limit: number = 100;
}

const UUID = '4b1e3a52-8c7d-4f0e-9a1b-2c3d4e5f6a7b';
const emoji = '\u{1F600}';

const samples: { metatype: new () => object; inputs: Record<string, unknown>[] }[] = [
  {
    metatype: ExecuteBody,
    inputs: [
      { owner: 'u1' },
      { owner: 'u1', function_input: { path: { a: 1 } } },
      { owner: 'u1', function_input: null },
      { owner: 'u1', function_input: [] },
      { owner: 'u1', function_input: 'x' },
      { owner: '' },
      { owner: 'abcde' },
      { owner: 'abcdef' },
      { owner: `${emoji}${emoji}${emoji}` },
      { owner: 5 },
      { owner: null },
      {},
      { owner: 'u1', unknown: true },
    ],
  },
  {
    metatype: ExtendedBody,
    inputs: [
      { id: UUID, scheme: 'api_key', enabled: true, api_key: 'k' },
      { id: UUID, scheme: 'api_key', enabled: 'true', api_key: 'k' },
      { id: UUID, scheme: 'api_key', enabled: 'maybe', api_key: 'k' },
      { id: 'not-a-uuid', scheme: 'api_key', enabled: true, api_key: 'k' },
      { id: UUID, scheme: 'basic', enabled: true, api_key: 'k' },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', kind: null, tags: null },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', kind: 'c' },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', tags: ['a', 'b'] },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', tags: ['a', 2] },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', tags: 'a' },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', name: 'a' },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', name: 'abcd' },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', name: `${emoji}${emoji}` },
      { id: UUID, scheme: 'oauth2', enabled: false, api_key: 'k', name: `a${emoji}` },
      { id: UUID, scheme: 'oauth2', enabled: false },
    ],
  },
  {
    metatype: ListQuery,
    inputs: [
      {},
      { intent: 'send an email', apps: 'GMAIL', active: 'yes', limit: '10' },
      { apps: ['GMAIL', 'SLACK'], active: 'off', limit: '1000' },
      { limit: '0' },
      { limit: '1001' },
      { limit: '2.5' },
      { limit: 'ten' },
      { active: 'sometimes' },
      { since: '2025-06-03T00:00:00Z' },
      { since: '2025-06-03' },
      { since: 'yesterday' },
      { since: ['2025-06-03T00:00:00Z', '2025-06-04T00:00:00Z'] },
    ],
  },
];

/** What the pipe did before plans: class-transformer, then class-validator with the whitelist. */
function classValidator(metatype: new () => object, value: object): { valid: boolean; instance: object } {
  const instance = plainToInstance(metatype, value);
  const errors = validateSync(instance, { whitelist: true, forbidUnknownValues: false, stopAtFirstError: true });
  return { valid: errors.length === 0, instance };
}

describe('ValidationPlan', () => {
  for (const { metatype, inputs } of samples) {
    it(`accepts exactly what class-validator accepts, with the same instance: ${metatype.name}`, () => {
      const plan = ValidationPlan.compile(metatype, (value) => plainToInstance(metatype, value));
      expect(plan).not.toBeNull();
      for (const input of inputs) {
        const expected = classValidator(metatype, input);
        const accepted = plan?.run(structuredClone(input));
        expect({ input, valid: accepted !== undefined }).toEqual({ input, valid: expected.valid });
        if (accepted) {
          expect(accepted).toBeInstanceOf(metatype);
          expect({ ...accepted }).toEqual({ ...expected.instance });
        }
      }
    });
  }

  it('drops fields the DTO does not declare, as the whitelist does', () => {
    const plan = ValidationPlan.compile(ExecuteBody, (value) => plainToInstance(ExecuteBody, value));
    const accepted = plan?.run({ owner: 'u1', extra: 'dropped', function_input: { a: 1 } });
    expect({ ...accepted }).toEqual({ owner: 'u1', function_input: { a: 1 } });
  });

  it('applies the class-transformer conversions of DTOs that declare them (query integers and booleans)', () => {
    const plan = ValidationPlan.compile(ListQuery, (value) => plainToInstance(ListQuery, value));
    const accepted = plan?.run({ limit: '7', active: 'no', apps: 'GMAIL', unknown: 'x' });
    expect({ ...accepted }).toEqual({ limit: 7, active: false, apps: ['GMAIL'] });
  });

  it('gives no plan for rules it does not model, so class-validator runs', () => {
    class Child {
      @OptionalString({ description: 'x' })
      name?: string;
    }
    class Nested {
      @ValidateNested()
      child: Child;
    }
    class Each {
      @IsISO8601({}, { each: true })
      dates: string[];
    }
    for (const metatype of [Nested, Each]) {
      expect(ValidationPlan.compile(metatype, (value) => value)).toBeNull();
    }
  });
});
