import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';

describe('GET /v1/health', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await TestApp.start();
  });

  afterAll(() => app.close());

  it('answers without an API key and returns a request id', async () => {
    const res = await app.get('/v1/health', { apiKey: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes a well-formed X-Request-ID', async () => {
    const res = await app.get('/v1/health', { apiKey: null, headers: { 'x-request-id': 'trace-42' } });
    expect(res.headers.get('x-request-id')).toBe('trace-42');
  });

  it('reports readiness after asking the database', async () => {
    const res = await app.get('/v1/health/ready', { apiKey: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  it('answers 404 with an error body for unknown routes', async () => {
    const project = await app.ctx.newProject();
    const res = await app.get('/v1/nothing-here', { apiKey: project.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: expect.stringContaining('/v1/nothing-here') });
  });
});
