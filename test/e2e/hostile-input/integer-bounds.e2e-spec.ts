import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import { fillPath, operations } from './operations.js';

/**
 * Every integer input declares a maximum in the committed document, and the service enforces it:
 * one past it is 422 `less_than_equal`, values a double cannot hold exactly or PostgreSQL's bigint
 * cannot hold are refused the same way, and the maximum itself is served without error.
 */
describe('declared maxima on integer inputs', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const cases = operations.flatMap((operation) =>
    operation.parameters
      .filter((parameter) => parameter.schema.type === 'integer')
      .map((parameter) => ({ operation, parameter, maximum: parameter.schema.maximum as number })),
  );

  it('every limit and offset of the list and search operations is covered', () => {
    const names = cases.map((c) => `${c.operation.operationId}.${c.parameter.name}`);
    for (const operationId of [
      'listApps',
      'searchApps',
      'listFunctions',
      'searchFunctions',
      'listAppConfigurations',
      'listExecutions',
    ]) {
      expect(names).toEqual(expect.arrayContaining([`${operationId}.limit`, `${operationId}.offset`]));
    }
  });

  it.each(cases.map((c) => [`${c.operation.operationId} ${c.parameter.name}`, c]))(
    '%s declares and enforces its maximum',
    async (_, { operation, parameter, maximum }) => {
      expect(Number.isSafeInteger(maximum)).toBe(true);
      const request = (value: string) =>
        app.request(operation.method, fillPath(operation), { query: { [parameter.name]: value } });

      const atMaximum = await request(String(maximum));
      expect(atMaximum.status).toBe(200);

      for (const value of [String(maximum + 1), '9223372036854775808', '99999999999999999999999999']) {
        const res = await request(value);
        expect(res.status).toBe(422);
        expect(res.body.detail).toEqual([
          {
            loc: ['query', parameter.name],
            msg: `Input should be less than or equal to ${maximum}`,
            type: 'less_than_equal',
          },
        ]);
      }
    },
  );
});
