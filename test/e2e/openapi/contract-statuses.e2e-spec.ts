import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** What the committed document promises, checked against what the service answers (issue #34). */
describe('the committed OpenAPI document, against the service', () => {
  let app: TestApp;
  const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as Record<string, any>;
  const statusesOf = (path: string, method: string) => Object.keys(document.paths[path][method].responses);

  beforeAll(async () => {
    app = await TestApp.start();
    const { projectId } = await app.ctx.newProject();
    await app.ctx.newApp({ name: 'CONTRACT' });
    await app.ctx.newFunction('CONTRACT', { name: 'CONTRACT__SEND_NOTE', description: 'Send a note' });
    await app.ctx.newAppConfiguration(projectId, 'CONTRACT');
  });

  afterAll(() => app?.close());

  it('types a default search result so that `name` reads directly, and the answer fits the schema', async () => {
    const ok = document.paths['/v1/functions/search'].get.responses['200'].content['application/json'].schema;
    expect(ok).toEqual({ type: 'array', items: { $ref: '#/components/schemas/FunctionSearchResult' } });
    const item = document.components.schemas.FunctionSearchResult;
    expect(item.properties.name).toMatchObject({ type: 'string' });
    expect(item.anyOf ?? item.oneOf).toBeUndefined();

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    for (const [name, schema] of Object.entries<object>(document.components.schemas)) {
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    }
    const validate = ajv.compile({ ...ok, items: item });
    const basic = await app.get('/v1/functions/search', { query: { intent: 'send a note' } });
    expect(basic.status).toBe(200);
    expect(basic.body[0]).toEqual({ name: 'CONTRACT__SEND_NOTE', description: 'Send a note' });
    expect(validate(basic.body)).toBe(true);
    for (const format of ['openai', 'openai_responses', 'anthropic']) {
      const shaped = await app.get('/v1/functions/search', { query: { format } });
      expect(shaped.status).toBe(200);
      expect(validate(shaped.body), `${format}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('lists 431 where a URL and headers past 16 KiB get it: every operation', async () => {
    const res = await fetch(`${app.url}/v1/functions?app_names=${'A'.repeat(17 * 1024)}`, {
      headers: { 'x-api-key': app.ctx.defaultApiKey as string },
    });
    expect(res.status).toBe(431);
    expect(statusesOf('/v1/functions', 'get')).toContain('431');
  });

  it('lists 415 and 413 on operations that take a body, as the service answers them', async () => {
    const wrongType = await app.request('POST', '/v1/app-configurations', {
      rawBody: '{}',
      headers: { 'content-type': 'application/xml' },
    });
    expect(wrongType.status).toBe(415);
    const tooLarge = await app.request('POST', '/v1/app-configurations', {
      rawBody: JSON.stringify({ app_name: 'x'.repeat(6 * 1024 * 1024) }),
    });
    expect(tooLarge.status).toBe(413);
    expect(statusesOf('/v1/app-configurations', 'post')).toEqual(expect.arrayContaining(['413', '415']));
  });

  it('lists 429, 431 and 503 on every operation that checks credentials, 431 and 503 on every operation', () => {
    for (const [path, item] of Object.entries<Record<string, any>>(document.paths)) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!operation) {
          continue;
        }
        const statuses = Object.keys(operation.responses);
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['431', '503']));
        if (statuses.includes('401')) {
          expect(statuses, `${method} ${path}`).toContain('429');
        }
      }
    }
  });
});
