import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { AppConfigurationEntity } from '../../../src/app-configurations/app-configuration.entity.js';
import { MASKED_SECRET } from '../../../src/app-configurations/app-configurations.dto.js';
import { AppConfigurationsRepository } from '../../../src/app-configurations/app-configurations.repository.js';
import { withWriteBetween } from '../../helpers/between-read-and-write.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const PATH = '/v1/app-configurations';

describe('PATCH /v1/app-configurations/{app_name} (updateAppConfiguration)', () => {
  let app: TestApp;
  let projectB: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject('A');
    projectB = await app.ctx.newProject('B');
  });

  afterAll(() => app.close());

  /** A fresh app (api_key and oauth2; functions f1, f2 and a private one) configured by project A. */
  async function configured(body: Record<string, unknown> = {}) {
    const catalogApp = await app.ctx.newApp({ security_schemes: { api_key: {}, oauth2: {} } });
    const f1 = (await app.ctx.newFunction(catalogApp.name)).name;
    const f2 = (await app.ctx.newFunction(catalogApp.name)).name;
    const hidden = (await app.ctx.newFunction(catalogApp.name, { visibility: 'private' })).name;
    const res = await app.post(PATH, { app_name: catalogApp.name, security_scheme: 'api_key', ...body });
    expect(res.status).toBe(200);
    return { name: catalogApp.name, f1, f2, hidden, created: res.body };
  }

  const patch = (name: string, body: unknown, apiKey?: string | null) => app.patch(`${PATH}/${name}`, body, { apiKey });
  const row = (id: string) => app.dataSource.getRepository(AppConfigurationEntity).findOneByOrFail({ id });

  describe('absent and null fields', () => {
    it('an empty body changes nothing', async () => {
      const { name, created } = await configured({ enabled: false, all_functions_enabled: false });
      const res = await patch(name, {});
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created);
    });

    it('null fields change nothing', async () => {
      const { name, f1, created } = await configured({
        all_functions_enabled: false,
        enabled_functions: [],
        security_scheme_overrides: { oauth2: { client_id: 'c', client_secret: 'keep-me' } },
      });
      await patch(name, { enabled_functions: [f1] });
      const before = (await app.get(`${PATH}/${name}`)).body;
      const res = await patch(name, {
        security_scheme: null,
        security_scheme_overrides: null,
        enabled: null,
        all_functions_enabled: null,
        enabled_functions: null,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(before);
      expect(res.body).toMatchObject({
        security_scheme: 'api_key',
        enabled: true,
        all_functions_enabled: false,
        enabled_functions: [f1],
        security_scheme_overrides: { oauth2: { client_id: 'c', client_secret: '****' } },
      });
      expect(app.app.get(SecretBox).openJson((await row(created.id)).secrets!)).toEqual({
        oauth2_client_secret: 'keep-me',
      });
    });
  });

  it('switches enabled and moves updated_at forward', async () => {
    const { name, created } = await configured();
    const res = await patch(name, { enabled: false });
    expect(res.status).toBe(200);
    expect(res.body.enabled).toBe(false);
    expect(res.body.created_at).toBe(created.created_at);
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
    expect((await app.get(`${PATH}/${name}`)).body.enabled).toBe(false);
    expect((await patch(name, { enabled: true })).body.enabled).toBe(true);
  });

  it('columns the PATCH does not change keep a write committed between its read and its write', async () => {
    const { name, created } = await configured();
    const box = app.app.get(SecretBox);
    const res = await withWriteBetween(
      app.app.get(AppConfigurationsRepository),
      async () => {
        await app.dataSource.getRepository(AppConfigurationEntity).update(
          { id: created.id },
          {
            security_scheme_overrides: { oauth2: { client_id: 'meanwhile' } },
            secrets: box.sealJson({ oauth2_client_secret: 'meanwhile-secret' }),
          },
        );
      },
      () => patch(name, { enabled: false }),
    );
    expect(res.status).toBe(200);
    expect(res.body.enabled).toBe(false);
    expect(res.body.security_scheme_overrides).toEqual({
      oauth2: { client_id: 'meanwhile', client_secret: MASKED_SECRET },
    });
    const stored = await row(created.id);
    expect(stored.security_scheme_overrides).toEqual({ oauth2: { client_id: 'meanwhile' } });
    expect(box.openJson(stored.secrets!)).toEqual({ oauth2_client_secret: 'meanwhile-secret' });
  });

  it('changes the security scheme to another one the app supports', async () => {
    const { name } = await configured();
    const res = await patch(name, { security_scheme: 'oauth2' });
    expect(res.status).toBe(200);
    expect(res.body.security_scheme).toBe('oauth2');
  });

  describe('function enablement rules on the resulting state', () => {
    it('rule 2: all=false with a list enables exactly those', async () => {
      const { name, f1 } = await configured();
      const res = await patch(name, { all_functions_enabled: false, enabled_functions: [f1] });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ all_functions_enabled: false, enabled_functions: [f1] });
    });

    it('rule 3: all=false without a list, coming from all enabled, disables everything', async () => {
      const { name } = await configured();
      const res = await patch(name, { all_functions_enabled: false });
      expect(res.body).toMatchObject({ all_functions_enabled: false, enabled_functions: [] });
    });

    it('a list alone replaces the list while all stays false', async () => {
      const { name, f1, f2 } = await configured({ all_functions_enabled: false, enabled_functions: [] });
      await patch(name, { enabled_functions: [f1] });
      const res = await patch(name, { enabled_functions: [f2, f1] });
      expect(res.body).toMatchObject({ all_functions_enabled: false, enabled_functions: [f2, f1] });
      const cleared = await patch(name, { enabled_functions: [] });
      expect(cleared.body).toMatchObject({ all_functions_enabled: false, enabled_functions: [] });
    });

    it('rule 1: switching all on stores [] and a list sent with all enabled is ignored', async () => {
      const { name, f1, created } = await configured({ all_functions_enabled: false, enabled_functions: [] });
      await patch(name, { enabled_functions: [f1] });
      const res = await patch(name, { all_functions_enabled: true });
      expect(res.body).toMatchObject({ all_functions_enabled: true, enabled_functions: [] });
      expect((await row(created.id)).enabled_functions).toEqual([]);

      const ignored = await patch(name, { enabled_functions: [f1, 'NOT_CHECKED'] });
      expect(ignored.status).toBe(200);
      expect(ignored.body).toMatchObject({ all_functions_enabled: true, enabled_functions: [] });
    });

    it('400 naming unknown or private functions, and nothing changes', async () => {
      const { name, f1, hidden, created } = await configured();
      const res = await patch(name, { all_functions_enabled: false, enabled_functions: [f1, hidden, 'GHOST__FN'] });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(hidden);
      expect(res.body.error).toContain('GHOST__FN');
      expect((await app.get(`${PATH}/${name}`)).body).toEqual(created);
    });
  });

  describe('security_scheme_overrides', () => {
    it('sets oauth2 overrides sealed and masked, and {} clears them', async () => {
      const { name, created } = await configured();
      const res = await patch(name, {
        security_scheme_overrides: { oauth2: { client_id: 'cid', client_secret: 'patched-secret', scope: 'a b' } },
      });
      expect(res.status).toBe(200);
      expect(res.body.security_scheme_overrides).toEqual({
        oauth2: { client_id: 'cid', client_secret: '****', scope: 'a b' },
      });
      expect(res.text).not.toContain('patched-secret');
      const stored = await row(created.id);
      expect(JSON.stringify(stored.security_scheme_overrides)).not.toContain('patched-secret');
      expect(stored.secrets).not.toContain('patched-secret');
      expect(app.app.get(SecretBox).openJson(stored.secrets!)).toEqual({ oauth2_client_secret: 'patched-secret' });

      const cleared = await patch(name, { security_scheme_overrides: {} });
      expect(cleared.body.security_scheme_overrides).toEqual({});
      const after = await row(created.id);
      expect(after.secrets).toBeNull();
      expect(after.security_scheme_overrides).toEqual({});
    });
  });

  describe('errors', () => {
    it('400 for a scheme the app does not support, naming it', async () => {
      const { name, created } = await configured();
      const res = await patch(name, { security_scheme: 'http_bearer' });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(name);
      expect(res.body.error).toContain('http_bearer');
      expect(res.body.error).toContain('api_key, oauth2');
      expect((await app.get(`${PATH}/${name}`)).body).toEqual(created);
    });

    it('404 for an app the project has not configured', async () => {
      const unconfigured = await app.ctx.newApp();
      const res = await patch(unconfigured.name, { enabled: false });
      expect(res.status).toBe(404);
      expect(res.body.error).toContain(unconfigured.name);
    });

    it("404 for another project's configuration, which stays unchanged", async () => {
      const { name, created } = await configured();
      const res = await patch(name, { enabled: false, security_scheme: 'oauth2' }, projectB.apiKey);
      expect(res.status).toBe(404);
      expect((await app.get(`${PATH}/${name}`)).body).toEqual(created);
    });

    it('401 without an API key or with a wrong one', async () => {
      const { name, created } = await configured();
      expect((await patch(name, { enabled: false }, null)).status).toBe(401);
      expect((await patch(name, { enabled: false }, 'pb_wrong')).status).toBe(401);
      expect((await app.get(`${PATH}/${name}`)).body).toEqual(created);
    });
  });

  describe('422 input validation', () => {
    let name: string;

    beforeAll(async () => {
      name = (await configured()).name;
    });

    const detail = (loc: (string | number)[], type: string) => ({ loc, msg: expect.any(String), type });

    it('missing body', async () => {
      const res = await app.request('PATCH', `${PATH}/${name}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'missing')] });
    });

    it('empty JSON body', async () => {
      const res = await app.request('PATCH', `${PATH}/${name}`, { rawBody: '' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'missing')] });
    });

    it('malformed JSON text', async () => {
      const res = await app.request('PATCH', `${PATH}/${name}`, { rawBody: '{enabled: false}' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(['body'], 'json_invalid')] });
    });

    it.each([
      [{ enabled: 'sometimes' }, ['body', 'enabled'], 'bool_parsing'],
      [{ all_functions_enabled: [] }, ['body', 'all_functions_enabled'], 'bool_parsing'],
      [{ security_scheme: 'oauth' }, ['body', 'security_scheme'], 'enum'],
      [{ enabled_functions: {} }, ['body', 'enabled_functions'], 'list_type'],
      [{ enabled_functions: [null] }, ['body', 'enabled_functions', 0], 'string_type'],
      [{ security_scheme_overrides: 3 }, ['body', 'security_scheme_overrides'], 'dict_type'],
      [{ security_scheme_overrides: { http_basic: {} } }, ['body', 'security_scheme_overrides'], 'extra_forbidden'],
      [
        { security_scheme_overrides: { oauth2: { client_secret: 's' } } },
        ['body', 'security_scheme_overrides', 'oauth2', 'client_id'],
        'missing',
      ],
    ])('%o', async (body, loc, type) => {
      const res = await patch(name, body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [detail(loc, type)] });
    });
  });
});
