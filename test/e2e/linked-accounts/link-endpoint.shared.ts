import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import type { SecurityScheme } from '../../../src/apps/security-scheme.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const CONFIGURATIONS = '/v1/app-configurations';

export interface LinkEndpoint {
  path: string;
  scheme: Exclude<SecurityScheme, 'oauth2'>;
  /** Credential fields of a valid body; their values must be distinctive so leaks can be searched for. */
  credentials: Record<string, string>;
  /** A scheme other than `scheme` that the test apps also support, for the mismatch case. */
  otherScheme: SecurityScheme;
}

/**
 * The cases every non-OAuth linking endpoint shares: they differ only in path, scheme and credential
 * fields. Each endpoint's spec file calls this once, so each file still tests one operation.
 */
export function describeLinkEndpoint(endpoint: LinkEndpoint): void {
  const { path, scheme, credentials, otherScheme } = endpoint;
  const secretValues = Object.values(credentials).filter((value) => value.length > 0);

  describe(`POST ${path}`, () => {
    let app: TestApp;
    let projectA: TestProject;
    let projectB: TestProject;

    beforeAll(async () => {
      app = await TestApp.start();
      projectA = await app.ctx.newProject('A');
      projectB = await app.ctx.newProject('B');
    });

    afterAll(() => app.close());

    /** A fresh app supporting both schemes, configured by the project with `configured`. */
    async function configuredApp(configured: SecurityScheme = scheme, apiKey?: string) {
      const catalogApp = await app.ctx.newApp({ security_schemes: { [scheme]: {}, [otherScheme]: {} } });
      const res = await app.post(
        CONFIGURATIONS,
        { app_name: catalogApp.name, security_scheme: configured },
        { apiKey },
      );
      expect(res.status).toBe(200);
      return catalogApp.name;
    }

    const link = (body: unknown, apiKey?: string | null) => app.post(path, body, { apiKey });
    const valid = (appName: string, owner = 'owner-1') => ({
      app_name: appName,
      linked_account_owner_id: owner,
      ...credentials,
    });
    const expectNoSecrets = (text: string) => {
      for (const value of secretValues) {
        expect(text).not.toContain(value);
      }
    };

    describe('happy path', () => {
      it('links an account and answers LinkedAccountPublic without credentials', async () => {
        const appName = await configuredApp();
        const res = await link(valid(appName));

        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          id: expect.stringMatching(UUID),
          project_id: projectA.projectId,
          app_name: appName,
          linked_account_owner_id: 'owner-1',
          security_scheme: scheme,
          enabled: true,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        });
        expectNoSecrets(res.text);
        expectNoSecrets((await app.get(`/v1/linked-accounts/${res.body.id}`)).text);
        expectNoSecrets((await app.get('/v1/linked-accounts')).text);
      });

      it('stores the credentials sealed, never in clear', async () => {
        const appName = await configuredApp();
        const res = await link(valid(appName));
        const row = await app.dataSource.getRepository(LinkedAccountEntity).findOneByOrFail({ id: res.body.id });
        expectNoSecrets(row.credentials);
        expect(row.credentials).toMatch(/^v2\.[0-9a-f]{12}\./);
        expect(app.app.get(SecretBox).openJson(row.credentials)).toEqual(credentials);
        expect(row.security_scheme).toBe(scheme);
      });

      it('accepts an owner id of exactly 255 characters and ignores unknown fields', async () => {
        const appName = await configuredApp();
        const owner = 'o'.repeat(255);
        const res = await link({ ...valid(appName, owner), extra: 'ignored' });
        expect(res.status).toBe(200);
        expect(res.body.linked_account_owner_id).toBe(owner);
        expect(res.body).not.toHaveProperty('extra');
      });

      it('links the same owner to another app, and another project to the same app and owner', async () => {
        const first = await configuredApp();
        const second = await configuredApp();
        expect((await link(valid(first, 'shared'))).status).toBe(200);
        expect((await link(valid(second, 'shared'))).status).toBe(200);

        await app.post(CONFIGURATIONS, { app_name: first, security_scheme: scheme }, { apiKey: projectB.apiKey });
        const other = await link(valid(first, 'shared'), projectB.apiKey);
        expect(other.status).toBe(200);
        expect(other.body.project_id).toBe(projectB.projectId);
      });
    });

    describe('errors', () => {
      it('404 naming an app that does not exist or is not visible', async () => {
        const unknown = await link(valid('NO_SUCH_APP'));
        expect(unknown.status).toBe(404);
        expect(unknown.body).toEqual({ error: expect.stringContaining('NO_SUCH_APP') });

        const hidden = await app.ctx.newApp({ visibility: 'private', security_schemes: { [scheme]: {} } });
        expect((await link(valid(hidden.name))).status).toBe(404);
      });

      it('404 naming the app when the project has no configuration for it', async () => {
        const catalogApp = await app.ctx.newApp({ security_schemes: { [scheme]: {} } });
        const res = await link(valid(catalogApp.name));
        expect(res.status).toBe(404);
        expect(res.body.error).toContain(catalogApp.name);
        expect(res.body.error).toContain('configuration');
      });

      it('404 when only another project configured the app', async () => {
        const appName = await configuredApp(scheme, projectB.apiKey);
        const res = await link(valid(appName));
        expect(res.status).toBe(404);
        expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ app_name: appName })).toBe(0);
      });

      it('400 saying which scheme the configuration uses when it is another one', async () => {
        const appName = await configuredApp(otherScheme);
        const res = await link(valid(appName));
        expect(res.status).toBe(400);
        expect(res.body.error).toContain(appName);
        expect(res.body.error).toContain(`uses security scheme ${otherScheme}`);
        expect(res.body.error).toContain(scheme);
        expectNoSecrets(res.text);
      });

      it('409 for a second account of the same owner and app in the project', async () => {
        const appName = await configuredApp();
        expect((await link(valid(appName, 'dup'))).status).toBe(200);
        const again = await link(valid(appName, 'dup'));
        expect(again.status).toBe(409);
        expect(again.body.error).toContain(appName);
        expect(again.body.error).toContain('dup');
        expectNoSecrets(again.text);
        expect(
          await app.dataSource
            .getRepository(LinkedAccountEntity)
            .countBy({ app_name: appName, linked_account_owner_id: 'dup' }),
        ).toBe(1);
      });

      it('401 without an API key or with a wrong one', async () => {
        const appName = await configuredApp();
        const missing = await link(valid(appName), null);
        expect(missing.status).toBe(401);
        expect(missing.body).toEqual({ error: expect.any(String) });
        expect((await link(valid(appName), 'pb_wrong')).status).toBe(401);
        expect(await app.dataSource.getRepository(LinkedAccountEntity).countBy({ app_name: appName })).toBe(0);
      });
    });

    describe('422 input validation', () => {
      const detail = (loc: (string | number)[], type: string) => ({ loc, msg: expect.any(String), type });

      it('missing body', async () => {
        const res = await app.request('POST', path);
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ detail: [detail(['body'], 'missing')] });
      });

      it('empty JSON body', async () => {
        const res = await app.request('POST', path, { rawBody: '' });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ detail: [detail(['body'], 'missing')] });
      });

      it('malformed JSON text', async () => {
        const res = await app.request('POST', path, { rawBody: '{"app_name": "A", "linked_account_owner_id": }' });
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ detail: [detail(['body'], 'json_invalid')] });
      });

      it('every required field missing', async () => {
        const res = await link({});
        expect(res.status).toBe(422);
        const expected = ['app_name', 'linked_account_owner_id', ...Object.keys(credentials)].map((field) =>
          detail(['body', field], 'missing'),
        );
        expect(res.body.detail).toHaveLength(expected.length);
        expect(res.body.detail).toEqual(expect.arrayContaining(expected));
      });

      it('owner id longer than 255 characters', async () => {
        const res = await link(valid('ANY', 'o'.repeat(256)));
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ detail: [detail(['body', 'linked_account_owner_id'], 'string_too_long')] });
      });

      it('empty owner id', async () => {
        const res = await link(valid('ANY', ''));
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ detail: [detail(['body', 'linked_account_owner_id'], 'string_too_short')] });
      });

      it.each(['app_name', 'linked_account_owner_id', ...Object.keys(credentials)])(
        '%s not a string',
        async (field) => {
          const res = await link({ ...valid('ANY'), [field]: 42 });
          expect(res.status).toBe(422);
          expect(res.body).toEqual({ detail: [detail(['body', field], 'string_type')] });
        },
      );

      it('never echoes credential values in a validation error', async () => {
        const res = await link({ ...valid('ANY', 'o'.repeat(300)) });
        expect(res.status).toBe(422);
        expectNoSecrets(res.text);
      });
    });
  });
}
