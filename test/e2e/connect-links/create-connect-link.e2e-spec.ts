import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectLinkEntity } from '../../../src/connect-links/connect-link.entity.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { CONNECT_LINKS, configuredApp, createLink, sha256, UUID } from './connect.js';

const PUBLIC_BASE_URL = 'https://patchbay.example.test';
const ALLOWED = 'https://app.example.test';

// createConnectLink
describe('POST /v1/linked-accounts/connect-links', () => {
  let app: TestApp;
  let project: TestProject;
  let other: TestProject;

  beforeAll(async () => {
    app = await TestApp.start({ PUBLIC_BASE_URL, OAUTH2_REDIRECT_ALLOWED_ORIGINS: ALLOWED });
    project = await app.ctx.newProject('Acme Assistant');
    other = await app.ctx.newProject('Other');
  });

  afterAll(() => app.close());

  it('answers id, a PUBLIC_BASE_URL page with a single-use token, and the expiry (default 30 minutes)', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'api_key');
    const before = Date.now();
    const res = await app.post(
      CONNECT_LINKS,
      { app_name: catalogApp.name, linked_account_owner_id: 'user-1' },
      { apiKey: project.apiKey },
    );

    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'id', 'url']);
    expect(res.body.id).toMatch(UUID);
    const url = new URL(res.body.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC_BASE_URL}/connect/${res.body.id}`);
    const token = url.searchParams.get('token') as string;
    expect(token.length).toBeGreaterThanOrEqual(43);
    const expires = Date.parse(res.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 1800_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 1800_000);

    // Only the token's hash is stored.
    const row = await app.dataSource.getRepository(ConnectLinkEntity).findOneByOrFail({ id: res.body.id });
    expect(row.token_hash).toBe(sha256(token));
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row).toMatchObject({ project_id: project.projectId, app_name: catalogApp.name, status: 'pending' });
  });

  it('gives every link its own token', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const body = { app_name: catalogApp.name, linked_account_owner_id: 'user-1' };
    const a = await createLink(app, project.apiKey, body);
    const b = await createLink(app, project.apiKey, body);
    expect(a.id).not.toBe(b.id);
    expect(new URL(a.url).searchParams.get('token')).not.toBe(new URL(b.url).searchParams.get('token'));
  });

  it('takes expires_in_seconds within bounds', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, {
      app_name: catalogApp.name,
      linked_account_owner_id: 'user-1',
      expires_in_seconds: 120,
    });
    expect(Math.abs(Date.parse(link.expires_at) - (Date.now() + 120_000))).toBeLessThan(5_000);
  });

  it('accepts allow-listed after_link_redirect_url and webhook_url; a webhook gets a secret shown once', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, {
      app_name: catalogApp.name,
      linked_account_owner_id: 'user-1',
      after_link_redirect_url: `${ALLOWED}/done?x=1`,
      webhook_url: `${PUBLIC_BASE_URL}/hooks`,
    });
    expect(link.webhook_secret).toMatch(/^whsec_[\w-]{32}$/);
    const row = await app.dataSource.getRepository(ConnectLinkEntity).findOneByOrFail({ id: link.id });
    expect(row.webhook_secret).not.toContain(link.webhook_secret);
    expect(row.after_link_redirect_url).toBe(`${ALLOWED}/done?x=1`);
  });

  it.each([
    ['after_link_redirect_url', 'https://evil.example.test/steal'],
    ['webhook_url', 'http://169.254.169.254/latest'],
  ])('400 when %s has an origin outside the allow-list, nothing stored', async (field, value) => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const res = await app.post(
      CONNECT_LINKS,
      { app_name: catalogApp.name, linked_account_owner_id: 'user-1', [field]: value },
      { apiKey: project.apiKey },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(`${field} has origin ${new URL(value).origin}, which is not allowed`);
    expect(await app.dataSource.getRepository(ConnectLinkEntity).countBy({ app_name: catalogApp.name })).toBe(0);
  });

  it('404 for an unknown app and for an app the project has not configured', async () => {
    const unknown = await app.post(
      CONNECT_LINKS,
      { app_name: 'NO_SUCH_APP', linked_account_owner_id: 'user-1' },
      { apiKey: project.apiKey },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'App NO_SUCH_APP not found' });

    // Configured by the other project only: project isolation.
    const catalogApp = await configuredApp(app, other.apiKey, 'api_key');
    const res = await app.post(
      CONNECT_LINKS,
      { app_name: catalogApp.name, linked_account_owner_id: 'user-1' },
      { apiKey: project.apiKey },
    );
    expect(res.status).toBe(404);
    expect(res.body.error).toBe(`App configuration for ${catalogApp.name} not found in this project`);
  });

  it('400 when the configuration is disabled', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'api_key');
    const patched = await app.patch(
      `/v1/app-configurations/${catalogApp.name}`,
      { enabled: false },
      { apiKey: project.apiKey },
    );
    expect(patched.status, patched.text).toBe(200);
    const res = await app.post(
      CONNECT_LINKS,
      { app_name: catalogApp.name, linked_account_owner_id: 'user-1' },
      { apiKey: project.apiKey },
    );
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(`App configuration for ${catalogApp.name} is disabled`);
  });

  it('401 without an API key', async () => {
    const res = await app.post(CONNECT_LINKS, { app_name: 'X', linked_account_owner_id: 'u' }, { apiKey: null });
    expect(res.status).toBe(401);
  });

  it.each([
    [{ linked_account_owner_id: 'u' }, 'app_name', 'missing'],
    [{ app_name: 'A' }, 'linked_account_owner_id', 'missing'],
    [{ app_name: 'A', linked_account_owner_id: 'x'.repeat(256) }, 'linked_account_owner_id', 'string_too_long'],
    [{ app_name: 'A', linked_account_owner_id: '' }, 'linked_account_owner_id', 'string_too_short'],
    [
      { app_name: 'A', linked_account_owner_id: 'u', expires_in_seconds: 59 },
      'expires_in_seconds',
      'greater_than_equal',
    ],
    [
      { app_name: 'A', linked_account_owner_id: 'u', expires_in_seconds: 604801 },
      'expires_in_seconds',
      'less_than_equal',
    ],
    [{ app_name: 'A', linked_account_owner_id: 'u', expires_in_seconds: 'soon' }, 'expires_in_seconds', 'int_parsing'],
    [
      { app_name: 'A', linked_account_owner_id: 'u', after_link_redirect_url: 'javascript:alert(1)' },
      'after_link_redirect_url',
      'url_parsing',
    ],
    [{ app_name: 'A', linked_account_owner_id: 'u', webhook_url: 'ftp://host/x' }, 'webhook_url', 'url_parsing'],
  ])('422 naming the field for %j', async (body, field, type) => {
    const res = await app.post(CONNECT_LINKS, body, { apiKey: project.apiKey });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['body', field], type })]));
  });
});
