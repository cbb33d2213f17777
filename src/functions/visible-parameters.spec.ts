import { describe, expect, it } from 'vitest';
import { visibleParameters } from './visible-parameters.js';

describe('visibleParameters', () => {
  it('keeps only visible properties, trims required and drops the visible keyword', () => {
    const schema = {
      type: 'object',
      properties: {
        path: {
          type: 'object',
          properties: { owner: { type: 'string' }, repo: { type: 'string' } },
          required: ['owner', 'repo'],
          visible: ['owner', 'repo'],
          additionalProperties: false,
        },
        header: {
          type: 'object',
          properties: { Accept: { type: 'string', default: 'application/json' } },
          required: ['Accept'],
          visible: [],
          additionalProperties: false,
        },
      },
      required: ['path', 'header'],
      visible: ['path'],
      additionalProperties: false,
    };

    expect(visibleParameters(schema)).toEqual({
      type: 'object',
      properties: {
        path: {
          type: 'object',
          properties: { owner: { type: 'string' }, repo: { type: 'string' } },
          required: ['owner', 'repo'],
          additionalProperties: false,
        },
      },
      required: ['path'],
      additionalProperties: false,
    });
  });

  it('applies the rule at every depth of nested objects', () => {
    const schema = {
      type: 'object',
      properties: {
        body: {
          type: 'object',
          properties: {
            message: {
              type: 'object',
              description: 'The message',
              properties: {
                text: { type: 'string' },
                trace_id: { type: 'string', default: 'none' },
                meta: {
                  type: 'object',
                  properties: { lang: { type: 'string' }, source: { type: 'string', default: 'agent' } },
                  required: ['lang', 'source'],
                  visible: ['lang'],
                  additionalProperties: false,
                },
              },
              required: ['text', 'trace_id', 'meta'],
              visible: ['text', 'meta'],
              additionalProperties: false,
            },
          },
          required: ['message'],
          visible: ['message'],
          additionalProperties: false,
        },
      },
      required: ['body'],
      visible: ['body'],
      additionalProperties: false,
    };

    const message = (visibleParameters(schema) as any).properties.body.properties.message;

    expect(message).toEqual({
      type: 'object',
      description: 'The message',
      properties: {
        text: { type: 'string' },
        meta: {
          type: 'object',
          properties: { lang: { type: 'string' } },
          required: ['lang'],
          additionalProperties: false,
        },
      },
      required: ['text', 'meta'],
      additionalProperties: false,
    });
    expect(JSON.stringify(visibleParameters(schema))).not.toContain('"visible"');
  });

  it('filters objects inside arrays, including arrays of arrays', () => {
    const item = {
      type: 'object',
      properties: { email: { type: 'string' }, internal_id: { type: 'integer', default: 0 } },
      required: ['email', 'internal_id'],
      visible: ['email'],
      additionalProperties: false,
    };
    const schema = {
      type: 'object',
      properties: {
        attendees: { type: 'array', items: item },
        grid: { type: 'array', items: { type: 'array', items: item } },
        pair: { type: 'array', items: [item, { type: 'string' }] },
      },
      required: [],
      visible: ['attendees', 'grid', 'pair'],
      additionalProperties: false,
    };
    const filteredItem = {
      type: 'object',
      properties: { email: { type: 'string' } },
      required: ['email'],
      additionalProperties: false,
    };

    expect(visibleParameters(schema)).toEqual({
      type: 'object',
      properties: {
        attendees: { type: 'array', items: filteredItem },
        grid: { type: 'array', items: { type: 'array', items: filteredItem } },
        pair: { type: 'array', items: [filteredItem, { type: 'string' }] },
      },
      required: [],
      additionalProperties: false,
    });
  });

  it('trims required to visible names and ignores visible names that are not properties', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string', default: 'x' }, c: { type: 'string' } },
      required: ['a', 'b'],
      visible: ['a', 'c', 'ghost'],
      additionalProperties: false,
    };

    expect(visibleParameters(schema)).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, c: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    });
  });

  it('keeps every property of an object node that has no visible list', () => {
    const schema = {
      type: 'object',
      properties: {
        rows: {
          type: 'array',
          items: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x'] },
        },
      },
      required: ['rows'],
      visible: ['rows'],
      additionalProperties: false,
    };

    expect(visibleParameters(schema)).toEqual({
      type: 'object',
      properties: {
        rows: {
          type: 'array',
          items: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x'] },
        },
      },
      required: ['rows'],
      additionalProperties: false,
    });
  });

  it('filters object nodes under oneOf branches and additionalProperties schemas', () => {
    const hidden = {
      type: 'object',
      properties: { shown: { type: 'string' }, secret: { type: 'string', default: 's' } },
      required: ['shown', 'secret'],
      visible: ['shown'],
      additionalProperties: false,
    };
    const filtered = {
      type: 'object',
      properties: { shown: { type: 'string' } },
      required: ['shown'],
      additionalProperties: false,
    };
    const schema = {
      type: 'object',
      properties: {
        choice: { oneOf: [hidden, { type: 'string' }] },
        map: { type: 'object', additionalProperties: hidden },
      },
      required: [],
      visible: ['choice', 'map'],
      additionalProperties: false,
    };

    expect(visibleParameters(schema)).toEqual({
      type: 'object',
      properties: {
        choice: { oneOf: [filtered, { type: 'string' }] },
        map: { type: 'object', additionalProperties: filtered },
      },
      required: [],
      additionalProperties: false,
    });
  });

  it('keeps a property that is itself named "visible"', () => {
    const schema = {
      type: 'object',
      properties: { visible: { type: 'boolean' }, other: { type: 'string' } },
      required: ['visible'],
      visible: ['visible'],
      additionalProperties: false,
    };

    expect(visibleParameters(schema)).toEqual({
      type: 'object',
      properties: { visible: { type: 'boolean' } },
      required: ['visible'],
      additionalProperties: false,
    });
  });

  it('does not modify its input', () => {
    const schema = {
      type: 'object',
      properties: {
        q: { type: 'string' },
        n: { type: 'object', properties: { z: { type: 'string' } }, required: ['z'], visible: [] },
      },
      required: ['q', 'n'],
      visible: ['q', 'n'],
      additionalProperties: false,
    };
    const before = structuredClone(schema);

    visibleParameters(schema);

    expect(schema).toEqual(before);
  });

  it('returns an empty visible object for an empty parameter schema', () => {
    expect(visibleParameters({})).toEqual({});
    expect(
      visibleParameters({ type: 'object', properties: {}, required: [], visible: [], additionalProperties: false }),
    ).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
  });
});
