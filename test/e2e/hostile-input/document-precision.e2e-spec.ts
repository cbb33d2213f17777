import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';
import { document, resolve } from './operations.js';

/** The committed document says exactly what the service enforces, and the service does enforce it. */
describe('the OpenAPI document is as strict as the service', () => {
  let app: TestApp;
  const schemas = document.components.schemas as Record<string, Record<string, any>>;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
  });

  afterAll(() => app.close());

  it('security_scheme_overrides refuses unknown keys in the document and in the service', async () => {
    for (const name of ['AppConfigurationCreate', 'AppConfigurationUpdate']) {
      const overrides = schemas[name].properties.security_scheme_overrides;
      expect(overrides.additionalProperties).toBe(false);
      expect(Object.keys(overrides.properties)).toEqual(['oauth2']);
    }
    const target = await app.ctx.newApp();
    const res = await app.post('/v1/app-configurations', {
      app_name: target.name,
      security_scheme: 'no_auth',
      security_scheme_overrides: { api_key: {} },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'security_scheme_overrides'], type: 'extra_forbidden' });
  });

  it('redirect URLs are declared as http(s) URLs, and other schemes are refused', async () => {
    const oauth2Start = document.paths['/v1/linked-accounts/oauth2'].get.parameters.find(
      (p: { name: string }) => p.name === 'after_oauth2_link_redirect_url',
    );
    const declared = [schemas.OAuth2Overrides.properties.redirect_url, oauth2Start.schema];
    for (const schema of declared) {
      expect(schema).toMatchObject({ type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' });
      const pattern = new RegExp(schema.pattern as string);
      expect(pattern.test('HTTPS://example.com/cb')).toBe(true);
      expect(pattern.test('ftp://example.com/cb')).toBe(false);
    }
    const target = await app.ctx.newApp();
    const res = await app.post('/v1/app-configurations', {
      app_name: target.name,
      security_scheme: 'oauth2',
      security_scheme_overrides: {
        oauth2: { client_id: 'c', client_secret: 's', redirect_url: 'ftp://example.com/cb' },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContainEqual({
      loc: ['body', 'security_scheme_overrides', 'oauth2', 'redirect_url'],
      msg: 'Input should be a valid http or https URL',
      type: 'url_parsing',
    });
    const start = await app.get('/v1/linked-accounts/oauth2', {
      query: { app_name: target.name, linked_account_owner_id: 'u', after_oauth2_link_redirect_url: 'javascript:x' },
    });
    expect(start.status).toBe(422);
    expect(start.body.detail).toContainEqual({
      loc: ['query', 'after_oauth2_link_redirect_url'],
      msg: 'Input should be a valid http or https URL',
      type: 'url_parsing',
    });
  });

  it('function_input is declared nullable, and null is accepted as no input', async () => {
    expect(resolve(schemas.FunctionExecute).properties.function_input.nullable).toBe(true);
    const res = await app.post('/v1/functions/NO_SUCH_APP__NOTHING/execute', {
      function_input: null,
      linked_account_owner_id: 'user-1',
    });
    expect(res.status).toBe(404);
  });
});
