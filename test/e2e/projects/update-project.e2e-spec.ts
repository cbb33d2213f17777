import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('PATCH /v1/project and GET /v1/project: the branding of the end-user pages', () => {
  let app: TestApp;
  let project: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject('acme-production');
  });

  afterAll(async () => {
    await app?.close();
  });

  const patch = (body: Record<string, unknown>, apiKey = project.apiKey) => app.patch('/v1/project', body, { apiKey });

  it('answers the project with empty branding at first', async () => {
    const res = await app.get('/v1/project', { apiKey: project.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: project.projectId,
      name: 'acme-production',
      display_name: null,
      logo_url: null,
      accent_color: null,
      home_url: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('sets the fields sent, leaves the others, clears a field sent as null', async () => {
    const set = await patch({
      display_name: 'Acme Assistant',
      logo_url: 'https://cdn.example.com/acme/logo.png?v=3',
      accent_color: '#6D28D9',
      home_url: 'https://app.example.com/settings',
    });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({
      name: 'acme-production',
      display_name: 'Acme Assistant',
      logo_url: 'https://cdn.example.com/acme/logo.png?v=3',
      accent_color: '#6d28d9',
      home_url: 'https://app.example.com/settings',
    });

    const partial = await patch({ logo_url: PNG, home_url: 'http://127.0.0.1:3000/back' });
    expect(partial.status, partial.text).toBe(200);
    expect(partial.body).toMatchObject({
      display_name: 'Acme Assistant',
      logo_url: PNG,
      accent_color: '#6d28d9',
      home_url: 'http://127.0.0.1:3000/back',
    });

    const cleared = await patch({ accent_color: null, logo_url: null });
    expect(cleared.body).toMatchObject({ display_name: 'Acme Assistant', logo_url: null, accent_color: null });
    expect((await app.get('/v1/project', { apiKey: project.apiKey })).body).toEqual(cleared.body);
  });

  it.each([
    ['accent_color', 'red', 'Input should be a colour as #rrggbb'],
    ['accent_color', '#12345', 'Input should be a colour as #rrggbb'],
    ['accent_color', '#123456;background:url(x)', 'Input should be a colour as #rrggbb'],
    ['logo_url', 'http://cdn.example.com/logo.png', 'the logo must be an https URL or a data:image URL'],
    ['logo_url', 'javascript:alert(1)', 'the logo must be an https URL or a data:image URL'],
    ['logo_url', 'data:text/html;base64,PHNjcmlwdD4=', 'a data: logo must be a base64 data:image URL'],
    ['logo_url', "https://cdn.example.com/a;script-src 'unsafe-inline'", 'a path without ";" or ","'],
    ['logo_url', 'https://user:pw@cdn.example.com/logo.png', 'must not carry credentials'],
    ['home_url', 'http://app.example.com/', 'the URL must be https (or http on a loopback address)'],
    ['home_url', 'ftp://app.example.com/', 'the URL must be https (or http on a loopback address)'],
    ['home_url', 'not a url', 'the URL must be https (or http on a loopback address)'],
  ])('refuses %s = %j with 422 naming the field and the reason', async (field, value, reason) => {
    const res = await patch({ [field]: value });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', field], msg: expect.stringContaining(reason) }),
    ]);
  });

  it('refuses a data: logo larger than 64 KiB', async () => {
    const res = await patch({ logo_url: `data:image/png;base64,${'A'.repeat(70_000)}` });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'logo_url']);
  });

  it('changes only the project of the API key; 401 without one', async () => {
    const other = await app.ctx.newProject('other');
    await patch({ display_name: 'Other App' }, other.apiKey);
    expect((await app.get('/v1/project', { apiKey: project.apiKey })).body.display_name).toBe('Acme Assistant');
    expect((await app.request('PATCH', '/v1/project', { apiKey: '', body: {} })).status).toBe(401);
  });
});
