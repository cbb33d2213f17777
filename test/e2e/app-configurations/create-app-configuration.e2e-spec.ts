import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { AppConfigurationEntity } from '../../../src/app-configurations/app-configuration.entity.js';
import type { AppEntity } from '../../../src/apps/app.entity.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PATH = '/v1/app-configurations';

describe('POST /v1/app-configurations (createAppConfiguration)', () => {
  let app: TestApp;
  let projectA: TestProject;
  let projectB: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    projectA = await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
  });

  afterAll(() => app.close());

  /** A visible app supporting api_key and oauth2, with two visible functions and one private one. */
  async function catalogApp(overrides: Partial<AppEntity> = {}) {
    const catalog = await app.ctx.newApp({
      security_schemes: {
        api_key: { location: 'header', name: 'X-Key' },
        oauth2: { location: 'header', name: 'Authorization', prefix: 'Bearer' },
      },
      ...overrides,
    });
    const f1 = await app.ctx.newFunction(catalog.name);
    const f2 = await app.ctx.newFunction(catalog.name);
    const hidden = await app.ctx.newFunction(catalog.name, { visibility: 'private' });
    return { name: catalog.name, f1: f1.name, f2: f2.name, hidden: hidden.name };
  }

  const create = (body: unknown, apiKey?: string | null) => app.post(PATH, body, { apiKey });

  describe('happy path', () => {
    it('creates with defaults: enabled, all functions, no overrides', async () => {
      const { name } = await catalogApp();
      const res = await create({ app_name: name, security_scheme: 'api_key' });

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        project_id: projectA.projectId,
        app_name: name,
        security_scheme: 'api_key',
        security_scheme_overrides: {},
        server_variables: {},
        extra_credentials: {},
        enabled: true,
        all_functions_enabled: true,
        enabled_functions: [],
        owner_execution_limit: null,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      const fetched = await app.get(`${PATH}/${name}`);
      expect(fetched.body).toEqual(res.body);
    });

    it('stores enabled false when asked', async () => {
      const { name } = await catalogApp();
      const res = await create({ app_name: name, security_scheme: 'oauth2', enabled: false });
      expect(res.status).toBe(200);
      expect(res.body.enabled).toBe(false);
      expect(res.body.security_scheme).toBe('oauth2');
    });

    it('rule 1: all functions enabled ignores enabled_functions and returns []', async () => {
      const { name, f1 } = await catalogApp();
      const res = await create({
        app_name: name,
        security_scheme: 'api_key',
        all_functions_enabled: true,
        enabled_functions: [f1, 'NOT_A_FUNCTION'],
      });
      expect(res.status).toBe(200);
      expect(res.body.all_functions_enabled).toBe(true);
      expect(res.body.enabled_functions).toEqual([]);
      const row = await app.dataSource.getRepository(AppConfigurationEntity).findOneByOrFail({ id: res.body.id });
      expect(row.enabled_functions).toEqual([]);
    });

    it('rule 2: exactly the listed functions are enabled (duplicates once)', async () => {
      const { name, f2 } = await catalogApp();
      const res = await create({
        app_name: name,
        security_scheme: 'api_key',
        all_functions_enabled: false,
        enabled_functions: [f2, f2],
      });
      expect(res.status).toBe(200);
      expect(res.body.all_functions_enabled).toBe(false);
      expect(res.body.enabled_functions).toEqual([f2]);
    });

    it('rule 3: all functions disabled when the list is empty or absent', async () => {
      const first = await catalogApp();
      const empty = await create({
        app_name: first.name,
        security_scheme: 'api_key',
        all_functions_enabled: false,
        enabled_functions: [],
      });
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ all_functions_enabled: false, enabled_functions: [] });

      const second = await catalogApp();
      const absent = await create({ app_name: second.name, security_scheme: 'api_key', all_functions_enabled: false });
      expect(absent.status).toBe(200);
      expect(absent.body).toMatchObject({ all_functions_enabled: false, enabled_functions: [] });
    });

    it('ignores unknown body fields', async () => {
      const { name } = await catalogApp();
      const res = await create({ app_name: name, security_scheme: 'api_key', colour: 'blue' });
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('colour');
    });
  });

  describe('oauth2 overrides', () => {
    it('seals the client secret, stores the rest in clear and masks the secret in the answer', async () => {
      const { name } = await catalogApp();
      const secret = 'very-secret-client-secret-123';
      const res = await create({
        app_name: name,
        security_scheme: 'oauth2',
        security_scheme_overrides: {
          oauth2: {
            client_id: 'my-client',
            client_secret: secret,
            redirect_url: 'https://example.com/callback',
            scope: 'read write',
            extra: 'dropped',
          },
        },
      });

      expect(res.status).toBe(200);
      expect(res.body.security_scheme_overrides).toEqual({
        oauth2: {
          client_id: 'my-client',
          client_secret: '****',
          redirect_url: 'https://example.com/callback',
          scope: 'read write',
        },
      });
      expect(res.text).not.toContain(secret);

      const row = await app.dataSource.getRepository(AppConfigurationEntity).findOneByOrFail({ id: res.body.id });
      expect(JSON.stringify(row.security_scheme_overrides)).not.toContain(secret);
      expect(row.security_scheme_overrides).toEqual({
        oauth2: { client_id: 'my-client', redirect_url: 'https://example.com/callback', scope: 'read write' },
      });
      expect(row.secrets).toBeTruthy();
      expect(row.secrets).not.toContain(secret);
      expect(app.app.get(SecretBox).openJson(row.secrets!)).toEqual({ oauth2_client_secret: secret });

      const fetched = await app.get(`${PATH}/${name}`);
      expect(fetched.body.security_scheme_overrides.oauth2.client_secret).toBe('****');
      expect(fetched.text).not.toContain(secret);
      const listed = await app.get(PATH, { query: { app_names: name } });
      expect(listed.text).not.toContain(secret);
      expect(listed.body[0].security_scheme_overrides.oauth2.client_secret).toBe('****');
    });

    it('accepts an empty overrides object and a localhost redirect URL', async () => {
      const first = await catalogApp();
      const empty = await create({ app_name: first.name, security_scheme: 'oauth2', security_scheme_overrides: {} });
      expect(empty.status).toBe(200);
      expect(empty.body.security_scheme_overrides).toEqual({});

      const second = await catalogApp();
      const local = await create({
        app_name: second.name,
        security_scheme: 'oauth2',
        security_scheme_overrides: {
          oauth2: { client_id: 'c', client_secret: 's', redirect_url: 'http://localhost:8000/cb' },
        },
      });
      expect(local.status).toBe(200);
      expect(local.body.security_scheme_overrides.oauth2).toEqual({
        client_id: 'c',
        client_secret: '****',
        redirect_url: 'http://localhost:8000/cb',
      });
    });
  });

  describe('errors', () => {
    it('401 without an API key and with a wrong one', async () => {
      const { name } = await catalogApp();
      const missing = await create({ app_name: name, security_scheme: 'api_key' }, null);
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
      const wrong = await create({ app_name: name, security_scheme: 'api_key' }, 'pb_not-a-real-key');
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual({ error: expect.any(String) });
      expect(await app.get(`${PATH}/${name}`)).toMatchObject({ status: 404 });
    });

    it('404 for an unknown, private or inactive app, naming it', async () => {
      const unknown = await create({ app_name: 'NO_SUCH_APP', security_scheme: 'api_key' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'App NO_SUCH_APP not found' });

      const priv = await catalogApp({ visibility: 'private' });
      const resPrivate = await create({ app_name: priv.name, security_scheme: 'api_key' });
      expect(resPrivate.status).toBe(404);
      expect(resPrivate.body.error).toContain(priv.name);

      const inactive = await catalogApp({ active: false });
      expect((await create({ app_name: inactive.name, security_scheme: 'api_key' })).status).toBe(404);
    });

    it('400 for a scheme the app does not support, naming the app and its schemes', async () => {
      const { name } = await catalogApp();
      const res = await create({ app_name: name, security_scheme: 'http_basic' });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(name);
      expect(res.body.error).toContain('http_basic');
      expect(res.body.error).toContain('api_key, oauth2');
    });

    it('409 for a second configuration of the same app in the project; another project may have its own', async () => {
      const { name } = await catalogApp();
      expect((await create({ app_name: name, security_scheme: 'api_key' })).status).toBe(200);
      const again = await create({ app_name: name, security_scheme: 'oauth2' });
      expect(again.status).toBe(409);
      expect(again.body.error).toContain(name);

      const other = await create({ app_name: name, security_scheme: 'oauth2' }, projectB.apiKey);
      expect(other.status).toBe(200);
      expect(other.body.project_id).toBe(projectB.projectId);
      expect((await app.get(`${PATH}/${name}`)).body.security_scheme).toBe('api_key');
    });

    it('400 naming functions that are unknown, private or of another app', async () => {
      const { name, f1, hidden } = await catalogApp();
      const otherApp = await catalogApp();
      const res = await create({
        app_name: name,
        security_scheme: 'api_key',
        all_functions_enabled: false,
        enabled_functions: [f1, 'GHOST__FN', hidden, otherApp.f1],
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('GHOST__FN');
      expect(res.body.error).toContain(hidden);
      expect(res.body.error).toContain(otherApp.f1);
      expect(res.body.error).not.toContain(`${f1},`);
      expect((await app.get(`${PATH}/${name}`)).status).toBe(404);
    });
  });

  describe('422 input validation', () => {
    const detail = (loc: (string | number)[], type: string) => ({ loc, msg: expect.any(String), type });

    it('missing body (no content type)', async () => {
      const res = await app.request('POST', PATH);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'missing')] });
    });

    it('empty JSON body', async () => {
      const res = await app.request('POST', PATH, { rawBody: '' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'missing')] });
    });

    it('malformed JSON text', async () => {
      const res = await app.request('POST', PATH, { rawBody: '{"app_name": "X",' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'json_invalid')] });
    });

    it('a body that is not an object', async () => {
      const res = await create([{ app_name: 'X' }]);
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toEqual(detail(['body'], 'dict_type'));
    });

    it('missing required fields', async () => {
      const res = await create({});
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual(
        expect.arrayContaining([
          detail(['body', 'app_name'], 'missing'),
          detail(['body', 'security_scheme'], 'missing'),
        ]),
      );
    });

    it.each([
      ['app_name not a string', { app_name: 12, security_scheme: 'api_key' }, ['body', 'app_name'], 'string_type'],
      ['unknown scheme', { app_name: 'X', security_scheme: 'basic' }, ['body', 'security_scheme'], 'enum'],
      [
        'all_functions_enabled not a boolean',
        { app_name: 'X', security_scheme: 'api_key', all_functions_enabled: 'maybe' },
        ['body', 'all_functions_enabled'],
        'bool_parsing',
      ],
      [
        'enabled not a boolean',
        { app_name: 'X', security_scheme: 'api_key', enabled: 3 },
        ['body', 'enabled'],
        'bool_parsing',
      ],
      [
        'enabled_functions not a list',
        { app_name: 'X', security_scheme: 'api_key', enabled_functions: 'F' },
        ['body', 'enabled_functions'],
        'list_type',
      ],
      [
        'enabled_functions with a non-string',
        { app_name: 'X', security_scheme: 'api_key', enabled_functions: ['A', 7] },
        ['body', 'enabled_functions', 1],
        'string_type',
      ],
      [
        'overrides not an object',
        { app_name: 'X', security_scheme: 'api_key', security_scheme_overrides: 'x' },
        ['body', 'security_scheme_overrides'],
        'dict_type',
      ],
      [
        'overrides an array',
        { app_name: 'X', security_scheme: 'api_key', security_scheme_overrides: [] },
        ['body', 'security_scheme_overrides'],
        'dict_type',
      ],
      [
        'overrides for a scheme without overrides',
        { app_name: 'X', security_scheme: 'api_key', security_scheme_overrides: { api_key: { name: 'k' } } },
        ['body', 'security_scheme_overrides'],
        'extra_forbidden',
      ],
      [
        'oauth2 overrides not an object',
        { app_name: 'X', security_scheme: 'oauth2', security_scheme_overrides: { oauth2: 'x' } },
        ['body', 'security_scheme_overrides', 'oauth2'],
        'dict_type',
      ],
      [
        'oauth2 client_secret missing',
        { app_name: 'X', security_scheme: 'oauth2', security_scheme_overrides: { oauth2: { client_id: 'c' } } },
        ['body', 'security_scheme_overrides', 'oauth2', 'client_secret'],
        'missing',
      ],
      [
        'oauth2 client_id not a string',
        {
          app_name: 'X',
          security_scheme: 'oauth2',
          security_scheme_overrides: { oauth2: { client_id: 1, client_secret: 's' } },
        },
        ['body', 'security_scheme_overrides', 'oauth2', 'client_id'],
        'string_type',
      ],
      [
        'oauth2 redirect_url not http(s)',
        {
          app_name: 'X',
          security_scheme: 'oauth2',
          security_scheme_overrides: {
            oauth2: { client_id: 'c', client_secret: 's', redirect_url: 'ftp://example.com/cb' },
          },
        },
        ['body', 'security_scheme_overrides', 'oauth2', 'redirect_url'],
        'url_parsing',
      ],
      [
        'oauth2 redirect_url not a string',
        {
          app_name: 'X',
          security_scheme: 'oauth2',
          security_scheme_overrides: { oauth2: { client_id: 'c', client_secret: 's', redirect_url: 5 } },
        },
        ['body', 'security_scheme_overrides', 'oauth2', 'redirect_url'],
        'string_type',
      ],
    ])('%s', async (_name, body, loc, type) => {
      const res = await create(body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(loc, type)] });
    });

    it('names the unknown override schemes in the message', async () => {
      const res = await create({
        app_name: 'X',
        security_scheme: 'oauth2',
        security_scheme_overrides: { oauth2: { client_id: 'c', client_secret: 's' }, oauth: {} },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].msg).toContain('oauth');
      expect(res.body.detail[0].msg).toContain('supported for: oauth2');
    });

    it('never echoes a client secret in a validation error', async () => {
      const res = await create({
        app_name: 'X',
        security_scheme: 'oauth2',
        security_scheme_overrides: { oauth2: { client_id: 5, client_secret: 'leak-me-not' } },
      });
      expect(res.status).toBe(422);
      expect(res.text).not.toContain('leak-me-not');
    });
  });
});
