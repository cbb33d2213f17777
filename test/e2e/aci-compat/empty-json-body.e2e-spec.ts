import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

/**
 * Many HTTP clients (httpx and axios instances with default headers, ACI's SDK) send
 * `Content-Type: application/json` on every request, DELETE and GET included, with no body.
 */
describe('an empty body with a JSON content type', () => {
  let app: TestApp;
  let project: TestProject;
  const json = { 'content-type': 'application/json' };

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject();
  });

  afterAll(() => app.close());

  it('DELETE /v1/linked-accounts/{id} deletes, and answers 404 for an unknown id', async () => {
    const target = await app.ctx.newApp();
    const account = await app.ctx.newLinkedAccount(project.projectId, target.name);

    const deleted = await app.request('DELETE', `/v1/linked-accounts/${account.id}`, { rawBody: '', headers: json });
    const unknown = await app.request('DELETE', `/v1/linked-accounts/${randomUUID()}`, { rawBody: '', headers: json });

    expect(deleted.status).toBe(204);
    expect((await app.get(`/v1/linked-accounts/${account.id}`)).status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: expect.stringContaining('not found') });
  });

  it('DELETE /v1/app-configurations/{app_name} deletes, and answers 404 for an unknown app', async () => {
    const target = await app.ctx.newApp();
    await app.ctx.newAppConfiguration(project.projectId, target.name);

    const deleted = await app.request('DELETE', `/v1/app-configurations/${target.name}`, {
      rawBody: '',
      headers: json,
    });
    const unknown = await app.request('DELETE', '/v1/app-configurations/NO_SUCH_APP', { rawBody: '', headers: json });

    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ app_name: target.name, deleted_linked_accounts: 0 });
    expect(unknown.status).toBe(404);
  });

  it('GET routes answer as without the header', async () => {
    const res = await app.request('GET', '/v1/app-configurations', { headers: json });

    expect(res.status).toBe(200);
  });

  it('a route that needs a body still answers 422 "Field required" for the body', async () => {
    const post = await app.request('POST', '/v1/app-configurations', { rawBody: '', headers: json });
    const patch = await app.request('PATCH', '/v1/app-configurations/ANY_APP', { rawBody: '', headers: json });

    for (const res of [post, patch]) {
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ loc: ['body'], msg: 'Field required', type: 'missing' }] });
    }
  });

  it('malformed JSON still answers 422 json_invalid, on DELETE as on POST', async () => {
    const target = await app.ctx.newApp();
    const account = await app.ctx.newLinkedAccount(project.projectId, target.name);

    const del = await app.request('DELETE', `/v1/linked-accounts/${account.id}`, { rawBody: '{', headers: json });
    const post = await app.request('POST', '/v1/app-configurations', { rawBody: '{"app_name":', headers: json });

    for (const res of [del, post]) {
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }] });
    }
    // Nothing was deleted by the refused request.
    expect((await app.get(`/v1/linked-accounts/${account.id}`)).status).toBe(200);
  });

  it('a JSON body with prototype poisoning is still refused', async () => {
    const res = await app.request('POST', '/v1/app-configurations', {
      rawBody: '{"__proto__": {"polluted": true}, "app_name": "X", "security_scheme": "no_auth"}',
      headers: json,
    });

    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
