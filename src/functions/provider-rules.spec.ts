import { describe, expect, it } from 'vitest';
import { ProviderRules } from './provider-rules.js';

const fn = (name: string, parameters: Record<string, unknown>) => ({ name, description: 'Does a thing', parameters });

describe('ProviderRules', () => {
  const rules = new ProviderRules(48);

  it('accepts a plain object schema under a legal name, whatever its properties are called', () => {
    const parameters = {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          properties: { nullable: { type: 'string', enum: [{ readOnly: true }] }, oneOf: { type: 'integer' } },
          required: ['nullable'],
          visible: ['nullable', 'oneOf'],
        },
      },
      required: ['query'],
      visible: ['query'],
    };
    expect(rules.violations(fn('WEATHER__GET_FORECAST', parameters))).toEqual([]);
  });

  it('refuses names past the bound or with characters outside [A-Za-z0-9_-]', () => {
    const object = { type: 'object', properties: {} };
    expect(rules.violations(fn('A'.repeat(49), object))).toHaveLength(1);
    expect(rules.violations(fn('GITHUB__repos/get', object))[0]).toContain('name');
    expect(new ProviderRules().violations(fn('A'.repeat(64), object))).toEqual([]);
    expect(new ProviderRules().violations(fn('A'.repeat(65), object))).toHaveLength(1);
  });

  it('refuses schemas that are not objects, do not compile, or use a keyword providers refuse', () => {
    expect(rules.violations(fn('X__A', { type: 'string' }))).toEqual(['parameters: not a schema of type object']);
    expect(rules.violations(fn('X__B', { type: 'object', properties: { a: { type: 'no-such-type' } } }))[0]).toContain(
      'draft 2020-12',
    );
    const shown = { type: 'object', properties: { a: { type: 'string', not: { minLength: 1 }, nullable: true } } };
    expect(rules.violations(fn('X__C', shown))).toEqual(['parameters: keyword nullable']);
  });

  it('shows a oneOf as anyOf and leaves its discriminator out, so that the definition is accepted', () => {
    const choice = {
      type: 'object',
      properties: {
        pet: {
          oneOf: [
            { type: 'object', properties: { kind: { enum: ['cat'] } } },
            { type: 'object', properties: { kind: { enum: ['dog'] } } },
          ],
          discriminator: { propertyName: 'kind' },
        },
        // A property named like the keywords is a property, not a keyword.
        oneOf: { type: 'string', enum: ['oneOf'] },
      },
    };
    expect(rules.violations(fn('X__D', choice))).toEqual([]);
  });

  it('checks what an LLM is shown: hidden parameters are not part of the definition', () => {
    const parameters = {
      type: 'object',
      properties: { shown: { type: 'string' }, hidden: { type: 'string', nullable: true, default: 'x' } },
      required: ['hidden'],
      visible: ['shown'],
    };
    expect(rules.violations(fn('X__D', parameters))).toEqual([]);
  });
});
