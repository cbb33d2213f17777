import { describe, expect, it } from 'vitest';
import { visibleParameters } from './visible-parameters.js';

/** An object node of a parameter schema: closed, with its `visible` list when one is given. */
const objectNode = (
  properties: Record<string, unknown>,
  required: string[],
  visible?: string[],
  extra: Record<string, unknown> = {},
) => ({
  type: 'object',
  ...extra,
  properties,
  required,
  ...(visible ? { visible } : {}),
  additionalProperties: false,
});

describe('visibleParameters', () => {
  it('keeps only visible properties, trims required and drops the visible keyword', () => {
    const path = { owner: { type: 'string' }, repo: { type: 'string' } };
    const schema = objectNode(
      {
        path: objectNode(path, ['owner', 'repo'], ['owner', 'repo']),
        header: objectNode({ Accept: { type: 'string', default: 'application/json' } }, ['Accept'], []),
      },
      ['path', 'header'],
      ['path'],
    );

    expect(visibleParameters(schema)).toEqual(objectNode({ path: objectNode(path, ['owner', 'repo']) }, ['path']));
  });

  it('applies the rule at every depth of nested objects', () => {
    const meta = objectNode(
      { lang: { type: 'string' }, source: { type: 'string', default: 'agent' } },
      ['lang', 'source'],
      ['lang'],
    );
    const message = objectNode(
      { text: { type: 'string' }, trace_id: { type: 'string', default: 'none' }, meta },
      ['text', 'trace_id', 'meta'],
      ['text', 'meta'],
      { description: 'The message' },
    );
    const schema = objectNode({ body: objectNode({ message }, ['message'], ['message']) }, ['body'], ['body']);

    const filtered = (visibleParameters(schema) as any).properties.body.properties.message;

    expect(filtered).toEqual(
      objectNode(
        { text: { type: 'string' }, meta: objectNode({ lang: { type: 'string' } }, ['lang']) },
        ['text', 'meta'],
        undefined,
        { description: 'The message' },
      ),
    );
    expect(JSON.stringify(visibleParameters(schema))).not.toContain('"visible"');
  });

  it('filters objects inside arrays, including arrays of arrays', () => {
    const item = objectNode(
      { email: { type: 'string' }, internal_id: { type: 'integer', default: 0 } },
      ['email', 'internal_id'],
      ['email'],
    );
    const filteredItem = objectNode({ email: { type: 'string' } }, ['email']);
    const arrays = (of: unknown) => ({
      attendees: { type: 'array', items: of },
      grid: { type: 'array', items: { type: 'array', items: of } },
      pair: { type: 'array', items: [of, { type: 'string' }] },
    });
    const schema = objectNode(arrays(item), [], ['attendees', 'grid', 'pair']);

    expect(visibleParameters(schema)).toEqual(objectNode(arrays(filteredItem), []));
  });

  it('filters object nodes under oneOf branches and additionalProperties schemas', () => {
    const hidden = objectNode(
      { shown: { type: 'string' }, secret: { type: 'string', default: 's' } },
      ['shown', 'secret'],
      ['shown'],
    );
    const filtered = objectNode({ shown: { type: 'string' } }, ['shown']);
    const branches = (of: unknown) => ({
      choice: { oneOf: [of, { type: 'string' }] },
      map: { type: 'object', additionalProperties: of },
    });
    const schema = objectNode(branches(hidden), [], ['choice', 'map']);

    expect(visibleParameters(schema)).toEqual(objectNode(branches(filtered), []));
  });

  const rows = {
    type: 'array',
    items: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x'] },
  };
  it.each([
    {
      rule: 'trims required to visible names and ignores visible names that are not properties',
      schema: objectNode(
        { a: { type: 'string' }, b: { type: 'string', default: 'x' }, c: { type: 'string' } },
        ['a', 'b'],
        ['a', 'c', 'ghost'],
      ),
      visible: objectNode({ a: { type: 'string' }, c: { type: 'string' } }, ['a']),
    },
    {
      rule: 'keeps every property of an object node that has no visible list',
      schema: objectNode({ rows }, ['rows'], ['rows']),
      visible: objectNode({ rows }, ['rows']),
    },
    {
      rule: 'keeps a property that is itself named "visible"',
      schema: objectNode({ visible: { type: 'boolean' }, other: { type: 'string' } }, ['visible'], ['visible']),
      visible: objectNode({ visible: { type: 'boolean' } }, ['visible']),
    },
    {
      rule: 'returns an empty visible object for an empty parameter schema',
      schema: objectNode({}, [], []),
      visible: objectNode({}, []),
    },
    { rule: 'returns an empty schema as it is', schema: {}, visible: {} },
  ])('$rule', ({ schema, visible }) => {
    expect(visibleParameters(schema)).toEqual(visible);
  });

  it('does not modify its input', () => {
    const schema = objectNode(
      {
        q: { type: 'string' },
        n: { type: 'object', properties: { z: { type: 'string' } }, required: ['z'], visible: [] },
      },
      ['q', 'n'],
      ['q', 'n'],
    );
    const before = structuredClone(schema);

    visibleParameters(schema);

    expect(schema).toEqual(before);
  });
});
