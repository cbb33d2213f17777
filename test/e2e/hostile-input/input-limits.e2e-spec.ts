import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INPUT_LIMITS } from '../../../libs/common/src/index.js';
import { TestApp } from '../../helpers/test-app.js';

/** The limits every request is held to, whatever the route: answered in the service's shapes, never 5xx. */
describe('request limits', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const execute = (functionInput: unknown) =>
    app.post('/v1/functions/ANY__FUNCTION/execute', {
      function_input: functionInput,
      linked_account_owner_id: 'user-1',
    });

  it('a body over 5 MiB answers 413 in the {error} shape', async () => {
    const res = await app.request('POST', '/v1/functions/ANY__FUNCTION/execute', {
      rawBody: JSON.stringify({ function_input: { text: 'x'.repeat(5 * 1024 * 1024) } }),
    });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: expect.stringContaining('too large') });
  });

  it(`function_input nested deeper than ${INPUT_LIMITS.maxDepth} levels answers 422 naming the path`, async () => {
    // The body is level 1: function_input and 30 objects inside it make 32 levels, one more is too deep.
    const nest = (levels: number): unknown => (levels === 0 ? 'leaf' : { a: nest(levels - 1) });
    const within = await execute(nest(INPUT_LIMITS.maxDepth - 1));
    const beyond = await execute(nest(INPUT_LIMITS.maxDepth));
    const arrays = await app.request('POST', '/v1/functions/ANY__FUNCTION/execute', {
      rawBody: `{"linked_account_owner_id":"u","function_input":{"list":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
    });

    expect(within.status).toBe(404);
    expect(beyond.status).toBe(422);
    const deepest = ['body', 'function_input', ...Array<string>(INPUT_LIMITS.maxDepth - 1).fill('a')];
    expect(beyond.body.detail).toEqual([
      { loc: deepest, msg: `JSON should be nested at most ${INPUT_LIMITS.maxDepth} levels deep`, type: 'too_deep' },
    ]);
    expect(arrays.status).toBe(422);
    expect(arrays.body.detail[0].type).toBe('too_deep');
  });

  it('a caller without a valid key is answered 401 before its input is looked at', async () => {
    const nest = (levels: number): unknown => (levels === 0 ? 'leaf\u0000' : { a: nest(levels - 1) });
    const body = { function_input: nest(INPUT_LIMITS.maxDepth), linked_account_owner_id: 'user-1' };
    const keyless = await app.request('POST', '/v1/functions/ANY__FUNCTION/execute', { body, apiKey: null });
    const wrongKey = await app.request('POST', '/v1/functions/ANY__FUNCTION/execute', { body, apiKey: 'not-a-key' });
    const withKey = await app.request('POST', '/v1/functions/ANY__FUNCTION/execute', { body });

    expect([keyless.status, wrongKey.status, withKey.status]).toEqual([401, 401, 422]);
    expect(keyless.text).not.toContain('too_deep');
    expect(wrongKey.text).not.toContain('too_deep');
  });

  it(`arrays over ${INPUT_LIMITS.maxArrayItems} items answer 422 naming the path`, async () => {
    const res = await execute({ items: new Array(INPUT_LIMITS.maxArrayItems + 1).fill(0) });
    const within = await execute({ items: new Array(INPUT_LIMITS.maxArrayItems).fill(0) });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'function_input', 'items'],
        msg: `List should have at most ${INPUT_LIMITS.maxArrayItems} items after validation`,
        type: 'too_long',
      },
    ]);
    expect(within.status).toBe(404);
  });

  it(`strings over ${INPUT_LIMITS.maxStringLength} characters answer 422 naming the path`, async () => {
    const res = await execute({ body: { text: 'x'.repeat(INPUT_LIMITS.maxStringLength + 1) } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'function_input', 'body', 'text'],
        msg: `String should have at most ${INPUT_LIMITS.maxStringLength} characters`,
        type: 'string_too_long',
      },
    ]);
  });

  it(`a query key repeated more than ${INPUT_LIMITS.maxQueryValues} times answers 422`, async () => {
    const names = Array.from({ length: INPUT_LIMITS.maxQueryValues + 1 }, (_, i) => `APP_${i}`);
    const res = await app.get('/v1/apps', { query: { app_names: names } });
    const within = await app.get('/v1/apps', { query: { app_names: names.slice(1) } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['query', 'app_names'],
        msg: `List should have at most ${INPUT_LIMITS.maxQueryValues} items after validation`,
        type: 'too_long',
      },
    ]);
    expect(within.status).toBe(200);
  });

  it('a URL and headers over 16 KiB are refused by the HTTP server (431), never reaching a route', async () => {
    const res = await fetch(`${app.url}/v1/apps?intent=${'x'.repeat(17 * 1024)}`, {
      headers: { 'x-api-key': app.ctx.defaultApiKey! },
    });
    expect(res.status).toBe(431);
  });
});
