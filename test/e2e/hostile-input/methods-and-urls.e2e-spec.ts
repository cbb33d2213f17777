import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import { fillPath, operations } from './operations.js';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http rather than fetch: fetch refuses TRACE and sends paths normalised. */
function raw(app: TestApp, method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('methods a route does not have, and malformed URLs', () => {
  let app: TestApp;
  let apiKey: string;

  beforeAll(async () => {
    app = await TestApp.start();
    apiKey = (await app.ctx.newProject()).apiKey;
  });

  afterAll(() => app.close());

  /** The methods of every documented route a concrete path matches (GET brings HEAD). */
  const allowedOn = (concrete: string) => {
    const methods = new Set<string>();
    for (const operation of operations) {
      const template = new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (template.test(concrete)) {
        methods.add(operation.method);
        if (operation.method === 'GET') {
          methods.add('HEAD');
        }
      }
    }
    return [...methods].sort();
  };
  const probes = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY'];
  const paths = [...new Set(operations.map((operation) => fillPath(operation, 'X')))];

  it.each(paths)('%s answers 405 with Allow for every method it does not have', async (concrete) => {
    const allowed = allowedOn(concrete);
    for (const method of probes.filter((m) => !allowed.includes(m))) {
      const res = await raw(app, method, concrete, { 'x-api-key': apiKey });
      expect(res.status, `${method} ${concrete}`).toBe(405);
      expect(res.headers.allow).toBe(allowed.join(', '));
      expect(JSON.parse(res.body)).toEqual({
        error: `Method ${method} is not allowed on this path; allowed: ${allowed.join(', ')}`,
      });
    }
  });

  it('an unknown path is still 404 in the service shape', async () => {
    const res = await raw(app, 'TRACE', '/v1/no-such-thing');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
  });

  it.each(['/v1/apps/%E0%A4%A', '/v1/apps/%', '/v1/linked-accounts/%zz', '/v1/functions/%C3%28/definition'])(
    '%s answers 400 in the service shape, documented on every operation',
    async (path) => {
      const res = await raw(app, 'GET', path, { 'x-api-key': apiKey });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toContain('application/json');
      expect(JSON.parse(res.body)).toEqual({ error: 'The URL path has a malformed percent-encoding' });
    },
  );

  it('a path parameter over 1024 characters answers 414 in the service shape', async () => {
    const res = await raw(app, 'GET', `/v1/apps/${'A'.repeat(1025)}`, { 'x-api-key': apiKey });
    expect(res.status).toBe(414);
    expect(JSON.parse(res.body)).toEqual({ error: 'A path parameter is longer than 1024 characters' });
    expect((await raw(app, 'GET', `/v1/apps/${'A'.repeat(1024)}`, { 'x-api-key': apiKey })).status).toBe(404);
  });

  it('every operation documents the 400 of a malformed URL, and those with path parameters the 414', () => {
    for (const operation of operations) {
      expect(Object.keys(operation.responses), operation.operationId).toContain('400');
      if (operation.parameters.some((p) => p.in === 'path')) {
        expect(Object.keys(operation.responses), operation.operationId).toContain('414');
      }
    }
  });
});
