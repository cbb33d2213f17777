import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import { fillPath, operations } from './operations.js';

const NUL = '\u0000';

interface Issue {
  loc: (string | number)[];
  type: string;
  msg: string;
}

/**
 * PostgreSQL text cannot hold U+0000. Every string input of every operation in the committed OpenAPI
 * document (path, query, JSON body at any depth) that carries one answers 422 naming where it is,
 * before anything reaches the database.
 */
describe('U+0000 in any string input', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const expectRefused = (res: { status: number; body: { detail?: Issue[] } }, loc: (string | number)[]) => {
    expect(res.status).toBe(422);
    expect(res.body.detail).toContainEqual({
      loc,
      msg: 'String should not contain the NUL character (U+0000)',
      type: 'string_pattern_mismatch',
    });
  };

  const pathCases = operations.flatMap((operation) =>
    operation.parameters.filter((p) => p.in === 'path').map((parameter) => ({ operation, parameter })),
  );
  it.each(pathCases.map((c) => [`${c.operation.method} ${c.operation.path} path ${c.parameter.name}`, c]))(
    '%s',
    async (_, { operation, parameter }) => {
      const path = fillPath(operation, 'X', { name: parameter.name, value: `A${NUL}B` });
      const res = await app.request(operation.method, path, operation.bodyProperties ? { body: {} } : {});
      expectRefused(res, ['path', parameter.name]);
    },
  );

  const queryCases = operations.flatMap((operation) =>
    operation.parameters.filter((p) => p.in === 'query').map((parameter) => ({ operation, parameter })),
  );
  it.each(queryCases.map((c) => [`${c.operation.method} ${c.operation.path} query ${c.parameter.name}`, c]))(
    '%s',
    async (_, { operation, parameter }) => {
      const single = await app.request(operation.method, fillPath(operation), { query: { [parameter.name]: NUL } });
      const repeated = await app.request(operation.method, fillPath(operation), {
        query: { [parameter.name]: ['fine', `x${NUL}`] },
      });
      expectRefused(single, ['query', parameter.name]);
      expectRefused(repeated, ['query', parameter.name, 1]);
    },
  );

  const bodyCases = operations.flatMap((operation) =>
    (operation.bodyProperties ?? []).map((property) => ({ operation, property })),
  );
  it.each(bodyCases.map((c) => [`${c.operation.method} ${c.operation.path} body ${c.property}`, c]))(
    '%s',
    async (_, { operation, property }) => {
      const top = await app.request(operation.method, fillPath(operation), { body: { [property]: `a${NUL}` } });
      const nested = await app.request(operation.method, fillPath(operation), {
        body: { [property]: { deeper: [1, { text: `${NUL}` }] } },
      });
      const key = await app.request(operation.method, fillPath(operation), {
        body: { [property]: { [`k${NUL}`]: 1 } },
      });
      expectRefused(top, ['body', property]);
      expectRefused(nested, ['body', property, 'deeper', 1, 'text']);
      expectRefused(key, ['body', property, `k${NUL}`]);
    },
  );

  it('covers the operations that take strings', () => {
    expect(pathCases.length).toBeGreaterThanOrEqual(8);
    expect(queryCases.length).toBeGreaterThanOrEqual(30);
    expect(bodyCases.map((c) => `${c.operation.operationId}.${c.property}`)).toEqual(
      expect.arrayContaining([
        'createAppConfiguration.app_name',
        'executeFunction.function_input',
        'executeFunction.linked_account_owner_id',
        'linkApiKeyAccount.api_key',
      ]),
    );
  });

  it('a request without a valid key is still 401, whatever its input', async () => {
    const res = await app.get('/v1/app-configurations', { apiKey: null, query: { app_names: NUL } });
    expect(res.status).toBe(401);
  });

  it('stores nothing for a refused body', async () => {
    const target = await app.ctx.newApp();
    const res = await app.post('/v1/app-configurations', { app_name: target.name, security_scheme: `no_auth${NUL}` });
    expect(res.status).toBe(422);
    expect((await app.get(`/v1/app-configurations/${target.name}`)).status).toBe(404);
  });
});
