import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { TestApp } from '../../helpers/test-app.js';

const unique = () => randomBytes(4).toString('hex').toUpperCase();

/** A catalogue-style schema with invisible parts at several depths. */
const PARAMETERS = {
  type: 'object',
  properties: {
    path: {
      type: 'object',
      properties: { repo: { type: 'string', description: 'Repository' } },
      required: ['repo'],
      visible: ['repo'],
      additionalProperties: false,
    },
    header: {
      type: 'object',
      properties: { Accept: { type: 'string', default: 'application/json' } },
      required: ['Accept'],
      visible: [],
      additionalProperties: false,
    },
    body: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        source: { type: 'string', default: 'patchbay' },
        labels: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, color: { type: 'string', default: 'grey' } },
            required: ['name', 'color'],
            visible: ['name'],
            additionalProperties: false,
          },
        },
      },
      required: ['title', 'source'],
      visible: ['title', 'labels'],
      additionalProperties: false,
    },
  },
  required: ['path', 'header', 'body'],
  visible: ['path', 'body'],
  additionalProperties: false,
};

const VISIBLE_SCHEMA = {
  type: 'object',
  properties: {
    path: {
      type: 'object',
      properties: { repo: { type: 'string', description: 'Repository' } },
      required: ['repo'],
      additionalProperties: false,
    },
    body: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        labels: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' } },
            required: ['name'],
            additionalProperties: false,
          },
        },
      },
      required: ['title'],
      additionalProperties: false,
    },
  },
  required: ['path', 'body'],
  additionalProperties: false,
};

describe('GET /v1/functions/{function_name}/definition (getFunctionDefinition)', () => {
  let app: TestApp;
  let fn: FunctionEntity;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
    const owner = await app.ctx.newApp({ name: `TRACKER_${unique()}` });
    fn = await app.ctx.newFunction(owner.name, {
      name: `${owner.name}__CREATE_ISSUE`,
      description: 'Create an issue',
      parameters: PARAMETERS,
    });
  });

  afterAll(() => app.close());

  const definition = (name: string, query: Record<string, string> = {}, apiKey?: string | null) =>
    app.get(`/v1/functions/${encodeURIComponent(name)}/definition`, { query, apiKey });

  it('answers in the OpenAI format by default, showing only visible parameters', async () => {
    const res = await definition(fn.name);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      type: 'function',
      function: { name: fn.name, description: 'Create an issue', parameters: VISIBLE_SCHEMA },
    });
  });

  it('answers in the OpenAI format when asked for openai', async () => {
    const res = await definition(fn.name, { inference_provider: 'openai' });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      type: 'function',
      function: { name: fn.name, description: 'Create an issue', parameters: VISIBLE_SCHEMA },
    });
  });

  it('answers in the Anthropic format when asked for anthropic', async () => {
    const res = await definition(fn.name, { inference_provider: 'anthropic' });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: fn.name, description: 'Create an issue', input_schema: VISIBLE_SCHEMA });
  });

  describe("format (ACI's current name)", () => {
    it.each([
      ['basic', { name: 'N', description: 'Create an issue' }],
      [
        'openai',
        { type: 'function', function: { name: 'N', description: 'Create an issue', parameters: VISIBLE_SCHEMA } },
      ],
      ['openai_responses', { type: 'function', name: 'N', description: 'Create an issue', parameters: VISIBLE_SCHEMA }],
      ['anthropic', { name: 'N', description: 'Create an issue', input_schema: VISIBLE_SCHEMA }],
    ])('answers the %s shape', async (format, shape) => {
      const res = await definition(fn.name, { format });

      expect(res.status).toBe(200);
      expect(res.body).toEqual(JSON.parse(JSON.stringify(shape).replaceAll('"N"', JSON.stringify(fn.name))));
    });

    it.each([
      ['openai', 'openai'],
      ['anthropic', 'anthropic'],
    ])('accepts format=%s with inference_provider=%s', async (format, provider) => {
      const both = await definition(fn.name, { format, inference_provider: provider });
      const alone = await definition(fn.name, { format });

      expect(both.status).toBe(200);
      expect(both.body).toEqual(alone.body);
    });

    it('answers 422 naming both when format and inference_provider disagree', async () => {
      const res = await definition(fn.name, { format: 'anthropic', inference_provider: 'openai' });

      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          {
            loc: ['query', 'format'],
            msg: 'format=anthropic disagrees with inference_provider=openai: give one of them, or the same value',
            type: 'value_error',
          },
        ],
      });
    });

    it.each(['x', 'OPENAI', ''])('answers 422 enum for format=%j', async (format) => {
      const res = await definition(fn.name, { format });

      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          {
            loc: ['query', 'format'],
            msg: "Input should be 'basic', 'openai', 'openai_responses' or 'anthropic'",
            type: 'enum',
          },
        ],
      });
    });
  });

  it('leaves the stored parameters untouched', async () => {
    await definition(fn.name);

    const [row] = await app.dataSource.query('SELECT parameters FROM functions WHERE name = $1', [fn.name]);
    expect(row.parameters).toEqual(PARAMETERS);
  });

  describe('404', () => {
    it('answers 404 for an unknown function, naming it', async () => {
      const res = await definition('NO_SUCH__FUNCTION');

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Function NO_SUCH__FUNCTION not found' });
    });

    it.each([
      ['private function', { visibility: 'private' as const }, {}],
      ['inactive function', { active: false }, {}],
      ['function of a private app', {}, { visibility: 'private' as const }],
      ['function of an inactive app', {}, { active: false }],
    ])('answers 404 for a %s', async (_kind, fnOverrides, appOverrides) => {
      const owner = await app.ctx.newApp({ name: `HIDDEN_${unique()}`, ...appOverrides });
      const hidden = await app.ctx.newFunction(owner.name, fnOverrides);

      for (const provider of ['openai', 'anthropic']) {
        const res = await definition(hidden.name, { inference_provider: provider });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: `Function ${hidden.name} not found` });
      }
    });
  });

  it('answers 401 without a key and with a wrong key', async () => {
    const missing = await definition(fn.name, {}, null);
    const wrong = await definition(fn.name, {}, 'wrong-key');

    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
  });

  it.each(['x', 'OpenAI', ''])('answers 422 enum for inference_provider=%j', async (provider) => {
    const res = await definition(fn.name, { inference_provider: provider });

    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ loc: ['query', 'inference_provider'], msg: "Input should be 'openai' or 'anthropic'", type: 'enum' }],
    });
  });

  it('validates the input before looking the function up', async () => {
    const res = await definition('NO_SUCH__FUNCTION', { inference_provider: 'x' });

    expect(res.status).toBe(422);
  });
});
