import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { executionScenario, type Scenario } from '../../factories/execution.factory.js';
import { hiddenDefaultsParameters } from '../../fixtures/schemas/hidden-defaults.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';

/**
 * A required property hidden from the LLM inside oneOf/anyOf/allOf branches and additionalProperties:
 * the definition does not show it, and execution fills its default (one walker of `visible` for both).
 */
describe('hidden required parameters with defaults, nested in branches and additionalProperties', () => {
  let app: TestApp;
  let upstream: Upstream;
  let scenario: Scenario;

  beforeAll(async () => {
    app = await TestApp.start();
    upstream = await Upstream.start();
    const projectId = (await app.ctx.newProject()).projectId;
    scenario = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: {
        protocol: 'rest',
        protocol_data: { method: 'POST', path: '/shapes', server_url: upstream.url },
        parameters: hiddenDefaultsParameters(),
      },
    });
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
  });

  beforeEach(() => upstream.reset());

  it('the definition shows none of them', async () => {
    const res = await app.get(`/v1/functions/${scenario.fn.name}/definition`);
    expect(res.status).toBe(200);
    const body = res.body.function.parameters.properties.body.properties;
    // Provider definitions state a oneOf as anyOf (OpenAI refuses oneOf in places); the branches are the same.
    expect(body.shape.oneOf).toBeUndefined();
    expect(body.shape.anyOf.map((branch: any) => [Object.keys(branch.properties), branch.required])).toEqual([
      [
        ['kind', 'radius'],
        ['kind', 'radius'],
      ],
      [
        ['kind', 'side'],
        ['kind', 'side'],
      ],
    ]);
    expect(body.style.anyOf[0]).toEqual({
      type: 'object',
      properties: { color: { type: 'string' } },
      required: ['color'],
    });
    expect(body.meta.allOf[0]).toEqual({ type: 'object', properties: { note: { type: 'string' } }, required: [] });
    expect(body.labels.additionalProperties).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
    expect(res.text).not.toContain('"visible"');
  });

  it.each([
    ['the first oneOf branch', { kind: 'circle', radius: 2 }, { kind: 'circle', radius: 2, unit: 'cm' }],
    ['the second oneOf branch', { kind: 'square', side: 3 }, { kind: 'square', side: 3, unit: 'in' }],
  ])('execution fills them, taking %s for the shape', async (_case, shape, sent) => {
    const res = await scenario.execute({
      body: { shape, style: { color: 'red' }, meta: { note: 'n' }, labels: { a: { text: 'hi' }, b: { text: 'yo' } } },
    });
    expect(res.body).toEqual({ success: true, data: { ok: true }, error: null });
    expect(JSON.parse(upstream.received[0].body)).toEqual({
      shape: sent,
      style: { color: 'red', opacity: 1 },
      meta: { note: 'n', source: 'patchbay' },
      labels: { a: { text: 'hi', lang: 'en' }, b: { text: 'yo', lang: 'en' } },
    });
  });

  it('a value the caller gave is kept', async () => {
    const res = await scenario.execute({
      body: { shape: { kind: 'circle', radius: 1 }, style: { color: 'blue' }, meta: {}, labels: {} },
    });
    expect(res.body.success).toBe(true);
    expect(JSON.parse(upstream.received[0].body)).toMatchObject({ style: { color: 'blue', opacity: 1 } });
  });
});
