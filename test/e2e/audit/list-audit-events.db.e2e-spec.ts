import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../../src/audit/actor.js';
import { CatalogService } from '../../../src/catalog/catalog.service.js';
import { AppConfig } from '../../../src/config/app-config.js';
import { ProjectsService } from '../../../src/projects/projects.service.js';
import { SecretsRotationService } from '../../../src/secrets/secrets-rotation.service.js';
import { freePort } from '../../helpers/free-port.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';
import { ConnectBrowser, CONNECT_LINKS, createLink } from '../connect-links/connect.js';
import { IDP_CLIENT, playBrowser, startIdentityProvider } from '../mcp-oauth/mcp-oauth.js';
import type { OidcServer } from '../oauth2/oidc-server.js';

const EVENTS = '/v1/audit-events';
const REDIRECT = 'http://127.0.0.1:53682/callback';

/** Every secret value this file hands the service; none may appear in an audit answer. */
const SECRETS = {
  apiKeyCredential: 'sk-audit-7c1e9d-linked-secret',
  password: 'pw-audit-41f0-secret',
  bearer: 'tok-audit-93ab-secret',
  oauth2ClientSecret: 'oauth2-client-secret-audit-5d2e',
  idpClientSecret: 'idp-client-secret-audit-8a61',
  connectPageKey: 'sk-connect-audit-2b7f-secret',
};

interface AuditEvent {
  id: string;
  project_id: string;
  actor_type: string;
  actor_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  before: Record<string, any> | null;
  after: Record<string, any> | null;
  created_at: string;
}

// On both databases: the records of a deletion are written in its transaction, and ties of one
// transaction keep their order (clock_timestamp()).
describe('GET /v1/audit-events', () => {
  let app: TestApp;
  let a: TestProject;
  let b: TestProject;
  /** A project whose MCP clients sign in through its identity provider, and revoke their tokens. */
  let c: TestProject;
  let signIn: OidcServer;
  /** Values the service generated (keys, tokens, client secrets): none may appear either. */
  const generated: string[] = [];
  const ids: Record<string, string> = {};

  const events = async (query: Record<string, string | number> = {}, apiKey = a.apiKey) => {
    const res = await app.get<AuditEvent[]>(EVENTS, { query, apiKey });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const one = async (action: string, resourceId: string) => {
    const found = await events({ action, resource_id: resourceId });
    expect(found, `${action} of ${resourceId}`).toHaveLength(1);
    return found[0];
  };

  beforeAll(async () => {
    // The webhook's origin is allowed: its address (and the credential in its query) must still not be recorded.
    const port = await freePort();
    app = await TestApp.start(
      { OAUTH2_REDIRECT_ALLOWED_ORIGINS: 'https://hooks.example.com', PUBLIC_BASE_URL: `http://127.0.0.1:${port}` },
      { port },
    );
    a = await app.ctx.newProject('audited');
    b = await app.ctx.newProject('other');
    c = await app.ctx.newProject('signed in');
    generated.push(a.apiKey, b.apiKey, c.apiKey);
    const key = { apiKey: a.apiKey };

    // App configurations: created (with an OAuth 2.0 client secret), updated, and one deleted with its account.
    const mail = await app.ctx.newApp({ security_schemes: { api_key: {}, oauth2: {} } });
    const files = await app.ctx.newApp({ security_schemes: { http_basic: {} } });
    const notes = await app.ctx.newApp({ security_schemes: { http_bearer: {}, api_key: {} } });
    ids.mail = mail.name;
    ids.notes = notes.name;
    for (const [appName, scheme] of [
      [mail.name, 'api_key'],
      [files.name, 'http_basic'],
      [notes.name, 'http_bearer'],
    ]) {
      const res = await app.post('/v1/app-configurations', { app_name: appName, security_scheme: scheme }, key);
      expect(res.status, res.text).toBe(200);
      ids[`config_${appName}`] = res.body.id;
    }
    const patched = await app.patch(
      `/v1/app-configurations/${mail.name}`,
      {
        enabled: false,
        security_scheme_overrides: { oauth2: { client_id: 'audit-client', client_secret: SECRETS.oauth2ClientSecret } },
      },
      key,
    );
    expect(patched.status, patched.text).toBe(200);
    await app.patch(`/v1/app-configurations/${mail.name}`, { enabled: true }, key);

    // Linked accounts: one per scheme with a secret; one disabled, one deleted, one deleted with its configuration.
    const linked = await app.post(
      '/v1/linked-accounts/api-key',
      { app_name: mail.name, linked_account_owner_id: 'owner-1', api_key: SECRETS.apiKeyCredential },
      key,
    );
    expect(linked.status, linked.text).toBe(200);
    ids.account = linked.body.id;
    const basic = await app.post(
      '/v1/linked-accounts/http-basic',
      { app_name: files.name, linked_account_owner_id: 'owner-1', username: 'ann', password: SECRETS.password },
      key,
    );
    ids.basic = basic.body.id;
    const bearer = await app.post(
      '/v1/linked-accounts/http-bearer',
      { app_name: notes.name, linked_account_owner_id: 'owner-1', token: SECRETS.bearer },
      key,
    );
    ids.bearer = bearer.body.id;
    expect((await app.patch(`/v1/linked-accounts/${ids.account}`, { enabled: false }, key)).status).toBe(200);
    expect((await app.delete(`/v1/linked-accounts/${ids.basic}`, key)).status).toBe(204);
    const deleted = await app.delete(`/v1/app-configurations/${notes.name}`, key);
    expect(deleted.body).toEqual({ app_name: notes.name, deleted_linked_accounts: 1 });

    // Connect links: one completed by the end user on its page (a re-link), one revoked.
    const link = await createLink(app, a.apiKey, {
      app_name: mail.name,
      linked_account_owner_id: 'owner-1',
      webhook_url: 'https://hooks.example.com/patchbay?token=hook-query-secret',
    });
    generated.push(new URL(link.url).searchParams.get('token') as string, link.webhook_secret as string);
    ids.link = link.id;
    const enabled = await app.patch(`/v1/app-configurations/${mail.name}`, { enabled: true }, key);
    expect(enabled.status).toBe(200);
    const browser = new ConnectBrowser(app);
    const page = await browser.open(link.url);
    expect(page.status, page.text).toBe(200);
    const done = await browser.submit(page, { api_key: SECRETS.connectPageKey });
    expect(done.status, done.text).toBe(200);
    const revoked = await createLink(app, a.apiKey, { app_name: mail.name, linked_account_owner_id: 'owner-2' });
    generated.push(new URL(revoked.url).searchParams.get('token') as string);
    ids.revokedLink = revoked.id;
    expect((await app.delete(`${CONNECT_LINKS}/${revoked.id}`, key)).status).toBe(204);

    // MCP tokens and the MCP identity provider.
    const token = await app.post('/v1/mcp/tokens', { linked_account_owner_id: 'owner-1' }, key);
    expect(token.status, token.text).toBe(201);
    generated.push(token.body.token);
    ids.token = token.body.id;
    expect((await app.delete(`/v1/mcp/tokens/${ids.token}`, key)).status).toBe(204);
    const idp = { issuer: 'http://127.0.0.1:9/idp', client_id: 'idp-client', client_secret: SECRETS.idpClientSecret };
    expect((await app.put('/v1/mcp/identity-provider', idp, key)).status).toBe(200);
    expect((await app.put('/v1/mcp/identity-provider', { ...idp, scopes: 'email' }, key)).status).toBe(200);

    // An MCP OAuth client registering itself (RFC 7591), confidential: its secret must not be recorded.
    const registered = await fetch(`${app.url}/v1/mcp/p/${a.projectId}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Audit Tester',
        redirect_uris: ['https://client.example.com/callback'],
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
    const client = (await registered.json()) as Record<string, string>;
    expect(registered.status, JSON.stringify(client)).toBe(201);
    ids.oauthClient = client.client_id;
    generated.push(client.client_secret, client.registration_access_token);
    expect((await app.delete('/v1/mcp/identity-provider', key)).status).toBe(204);

    // API keys, by the command line.
    const projects = app.app.get(ProjectsService);
    const second = await projects.createApiKey(CLI_ACTOR, a.projectId, new Date(Date.now() + 3_600_000));
    generated.push(second.api_key);
    ids.secondKey = second.api_key_id;
    await projects.revokeApiKey(CLI_ACTOR, second.api_key_id);

    // Project c: MCP clients revoking their own tokens at the authorization server, and token families
    // revoked on reuse (of a refresh token, of a code).
    signIn = await startIdentityProvider(app, c.projectId);
    const set = await app.put(
      '/v1/mcp/identity-provider',
      { issuer: signIn.issuer, ...IDP_CLIENT },
      { apiKey: c.apiKey },
    );
    expect(set.status, set.text).toBe(200);
    const mcpUrl = `${app.url}/v1/mcp/p/${c.projectId}`;
    const form = async (path: string, body: Record<string, string>) => {
      const res = await fetch(`${mcpUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, string> };
    };
    /** A public client registered, signed in and consented: its code, or with `redeem` its tokens. */
    const authorize = async () => {
      const reg = await fetch(`${mcpUrl}/reg`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Revoking Agent',
          redirect_uris: [REDIRECT],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        }),
      });
      const client = (await reg.json()) as { client_id: string; registration_access_token?: string };
      if (client.registration_access_token) {
        generated.push(client.registration_access_token);
      }
      const clientId = client.client_id;
      const verifier = randomBytes(32).toString('base64url');
      const url = new URL(`${mcpUrl}/auth`);
      for (const [name, value] of Object.entries({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'mcp',
        state: 'st',
        resource: mcpUrl,
        code_challenge_method: 'S256',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      })) {
        url.searchParams.set(name, value);
      }
      const { redirect } = await playBrowser(url, app.url, signIn);
      const code = redirect?.searchParams.get('code');
      expect(code, String(redirect)).toBeTruthy();
      const redeem = {
        grant_type: 'authorization_code',
        code: code as string,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT,
      };
      const tokens = await form('/token', redeem);
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      generated.push(code as string, tokens.body.access_token, tokens.body.refresh_token);
      const [row] = await app.dataSource.query<{ id: string }[]>(
        `SELECT id FROM mcp_tokens WHERE project_id = $1 AND client_id = $2`,
        [c.projectId, clientId],
      );
      return {
        clientId,
        redeem,
        tokenId: row.id,
        access_token: tokens.body.access_token,
        refresh_token: tokens.body.refresh_token,
      };
    };
    const byAccess = await authorize();
    ids.byAccess = byAccess.tokenId;
    ids.byAccessClient = byAccess.clientId;
    const elsewhere = await authorize();
    // Another public client presenting this token: refused silently (RFC 7009), nothing revoked.
    expect(
      (await form('/token/revocation', { token: byAccess.access_token, client_id: elsewhere.clientId })).status,
    ).toBe(200);
    ids.stillUsable = String(
      (await app.get('/v1/mcp/tokens', { apiKey: c.apiKey })).body.some(
        (t: { id: string }) => t.id === byAccess.tokenId,
      ),
    );
    expect(
      (await form('/token/revocation', { token: byAccess.access_token, client_id: byAccess.clientId })).status,
    ).toBe(200);
    // Again: nothing left to revoke, nothing recorded.
    expect(
      (await form('/token/revocation', { token: byAccess.refresh_token, client_id: byAccess.clientId })).status,
    ).toBe(200);
    ids.accessRefused = String(
      (
        await form('/token', {
          grant_type: 'refresh_token',
          refresh_token: byAccess.refresh_token,
          client_id: byAccess.clientId,
        })
      ).status,
    );
    const byRefresh = await authorize();
    ids.byRefresh = byRefresh.tokenId;
    expect(
      (
        await form('/token/revocation', {
          token: byRefresh.refresh_token,
          client_id: byRefresh.clientId,
          token_type_hint: 'refresh_token',
        })
      ).status,
    ).toBe(200);
    const reused = await authorize();
    ids.reused = reused.tokenId;
    ids.reusedClient = reused.clientId;
    const rotated = await form('/token', {
      grant_type: 'refresh_token',
      refresh_token: reused.refresh_token,
      client_id: reused.clientId,
    });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    generated.push(rotated.body.access_token, rotated.body.refresh_token);
    const replayed = await form('/token', {
      grant_type: 'refresh_token',
      refresh_token: reused.refresh_token,
      client_id: reused.clientId,
    });
    expect(replayed.body.error).toBe('invalid_grant');
    const codeTwice = await authorize();
    ids.codeTwice = codeTwice.tokenId;
    expect((await form('/token', codeTwice.redeem)).body.error).toBe('invalid_grant');
    ids.unrevoked = elsewhere.tokenId;

    // Sealing-key rotation, by the command line (every project's secrets: no project).
    await app.app.get(SecretsRotationService).rotate(CLI_ACTOR);

    // And in the other project, a change of its own.
    const other = await app.ctx.newApp();
    await app.post(
      '/v1/app-configurations',
      { app_name: other.name, security_scheme: 'api_key' },
      { apiKey: b.apiKey },
    );
  });

  afterAll(async () => {
    await signIn?.close();
    await app?.close();
  });

  it('records app configurations created, updated (only what changed) and deleted, by the API key', async () => {
    const created = await one('app_configuration.created', ids[`config_${ids.mail}`]);
    expect(created).toMatchObject({
      project_id: a.projectId,
      actor_type: 'api_key',
      actor_id: a.apiKeyId,
      resource_type: 'app_configuration',
      before: null,
      after: { app_name: ids.mail, security_scheme: 'api_key', enabled: true, all_functions_enabled: true },
    });
    const updates = await events({ action: 'app_configuration.updated', resource_id: ids[`config_${ids.mail}`] });
    // Newest first: re-enabled (twice: the second PATCH before the connect link changed nothing and is not recorded).
    expect(updates.map((event) => [event.before, event.after])).toEqual([
      [{ enabled: false }, { enabled: true }],
      [
        { enabled: true },
        {
          enabled: false,
          security_scheme_overrides: { oauth2: { client_id: 'audit-client' } },
          client_secret_replaced: true,
        },
      ],
    ]);
    const deleted = await one('app_configuration.deleted', ids[`config_${ids.notes}`]);
    expect(deleted.before).toMatchObject({
      app_name: ids.notes,
      security_scheme: 'http_bearer',
      deleted_linked_accounts: 1,
    });
    expect(deleted.after).toBeNull();
  });

  it('records linked accounts created, updated, deleted (also with their configuration) and re-linked on a connect page', async () => {
    expect((await one('linked_account.created', ids.account)).after).toEqual({
      app_name: ids.mail,
      linked_account_owner_id: 'owner-1',
      security_scheme: 'api_key',
      enabled: true,
    });
    expect(await one('linked_account.updated', ids.account)).toMatchObject({
      before: { enabled: true },
      after: { enabled: false },
    });
    expect((await one('linked_account.deleted', ids.basic)).before).toMatchObject({ security_scheme: 'http_basic' });
    // Deleted with its configuration, in the same transaction, by the same key.
    expect(await one('linked_account.deleted', ids.bearer)).toMatchObject({
      actor_type: 'api_key',
      actor_id: a.apiKeyId,
      before: { app_name: ids.notes, security_scheme: 'http_bearer' },
    });
    // The end user on the connect page: by the service, naming the link.
    expect(await one('linked_account.relinked', ids.account)).toMatchObject({
      actor_type: 'system',
      actor_id: null,
      after: { connect_link_id: ids.link, app_name: ids.mail },
    });
  });

  it('records connect links created, completed and revoked', async () => {
    expect(await one('connect_link.created', ids.link)).toMatchObject({
      actor_type: 'api_key',
      actor_id: a.apiKeyId,
      after: { app_name: ids.mail, linked_account_owner_id: 'owner-1', status: 'pending' },
    });
    expect(await one('connect_link.completed', ids.link)).toMatchObject({
      actor_type: 'system',
      after: { status: 'completed', linked_account_id: ids.account },
    });
    expect(await one('connect_link.revoked', ids.revokedLink)).toMatchObject({
      actor_id: a.apiKeyId,
      after: { status: 'revoked' },
    });
  });

  it('records MCP tokens, the identity provider and OAuth client registrations', async () => {
    expect((await one('mcp_token.created', ids.token)).after).toMatchObject({ linked_account_owner_id: 'owner-1' });
    expect(await one('mcp_token.revoked', ids.token)).toMatchObject({ actor_id: a.apiKeyId });
    expect((await one('mcp_identity_provider.created', a.projectId)).after).toEqual({
      issuer: 'http://127.0.0.1:9/idp',
      client_id: 'idp-client',
      scopes: 'openid',
      owner_claim: 'sub',
    });
    expect(await one('mcp_identity_provider.updated', a.projectId)).toMatchObject({
      before: { scopes: 'openid' },
      after: { scopes: 'openid email' },
    });
    expect((await one('mcp_identity_provider.deleted', a.projectId)).before).toMatchObject({ client_id: 'idp-client' });
    expect(await one('mcp_oauth_client.registered', ids.oauthClient)).toMatchObject({
      actor_type: 'system',
      after: { client_name: 'Audit Tester', redirect_uris: ['https://client.example.com/callback'] },
    });
  });

  it('records MCP tokens revoked at the authorization server: by the client, and a token family on reuse by the service', async () => {
    const revoked = async (tokenId: string) => {
      const found = await events({ action: 'mcp_token.revoked', resource_id: tokenId }, c.apiKey);
      expect(found, `revocations of ${tokenId}`).toHaveLength(1);
      return found[0];
    };
    // The client revoking its access token: the grant's MCP token is revoked with it, once.
    expect(await revoked(ids.byAccess)).toMatchObject({
      project_id: c.projectId,
      actor_type: 'mcp_oauth_client',
      actor_id: ids.byAccessClient,
      before: null,
      after: { oauth_client_id: ids.byAccessClient, reason: 'revoked_by_client', revoked_token: 'access_token' },
    });
    expect(ids.stillUsable).toBe('true');
    expect(ids.accessRefused).toBe('400');
    expect((await revoked(ids.byRefresh)).after).toMatchObject({
      reason: 'revoked_by_client',
      revoked_token: 'refresh_token',
    });
    expect(await revoked(ids.reused)).toMatchObject({
      actor_type: 'system',
      actor_id: null,
      after: { oauth_client_id: ids.reusedClient, reason: 'refresh_token_reused' },
    });
    expect((await revoked(ids.codeTwice)).after).toMatchObject({ reason: 'authorization_code_reused' });
    expect(await events({ action: 'mcp_token.revoked', resource_id: ids.unrevoked }, c.apiKey)).toEqual([]);
    // The revoked tokens are no longer listed; the other client's is.
    const listed = (await app.get('/v1/mcp/tokens', { apiKey: c.apiKey })).body.map((t: { id: string }) => t.id);
    expect(listed).toEqual([ids.unrevoked]);
    expect((await events({ actor: 'mcp_oauth_client' }, c.apiKey)).map((event) => event.action)).toEqual([
      'mcp_token.revoked',
      'mcp_token.revoked',
    ]);
  });

  it('records sealing-key rotations by the command line, with their counts, in no project', async () => {
    const rows = await app.dataSource.query<{ actor_type: string; project_id: string | null; after: object }[]>(
      `SELECT actor_type, project_id, after FROM audit_events WHERE action = 'sealing_key.rotated'`,
    );
    expect(rows).toEqual([
      {
        actor_type: 'cli',
        project_id: null,
        after: {
          key_id: expect.stringMatching(/^[0-9a-f]{12}$/),
          resealed: expect.any(Number),
          changed_concurrently: 0,
          unreadable: 0,
          remaining: 0,
        },
      },
    ]);
  });

  it('records the project, and API keys created and revoked by the command line', async () => {
    expect(await one('project.created', a.projectId)).toMatchObject({ actor_type: 'cli', after: { name: 'audited' } });
    expect((await one('api_key.created', a.apiKeyId)).actor_type).toBe('cli');
    expect((await one('api_key.created', ids.secondKey)).after).toEqual({ expires_at: expect.any(String) });
    const revoked = await one('api_key.revoked', ids.secondKey);
    expect(revoked).toMatchObject({ actor_type: 'cli', actor_id: null, before: { revoked_at: null } });
    expect(revoked.after?.revoked_at).toEqual(expect.any(String));
  });

  it('records the project’s branding changed through PATCH /v1/project, only what changed, by the API key', async () => {
    const patched = await app.patch('/v1/project', { accent_color: '#112233' }, { apiKey: a.apiKey });
    expect(patched.status, patched.text).toBe(200);
    expect(await one('project.updated', a.projectId)).toMatchObject({
      actor_type: 'api_key',
      actor_id: a.apiKeyId,
      before: { accent_color: null },
      after: { accent_color: '#112233' },
    });
  });

  it('never answers or keeps a secret: credentials, client secrets, tokens, codes, keys, webhook addresses', async () => {
    const all = await app.get(EVENTS, { query: { limit: 100 }, apiKey: a.apiKey });
    expect(all.body.length).toBeGreaterThan(20);
    const signedIn = await app.get(EVENTS, { query: { limit: 100 }, apiKey: c.apiKey });
    expect(signedIn.body.length).toBeGreaterThan(10);
    // Every record of every project, and those of no project (imports, key rotations), as stored.
    const table = JSON.stringify(await app.dataSource.query('SELECT * FROM audit_events'));
    expect(table).toContain('sealing_key.rotated');
    const config = app.app.get(AppConfig);
    const sealingKeys = [config.SECRETS_KEY, ...(config.SECRETS_KEYS ?? '').split(',')].filter((key) => key);
    expect(sealingKeys.length).toBeGreaterThan(0);
    for (const text of [all.text, signedIn.text, table]) {
      for (const value of [...Object.values(SECRETS), ...generated, ...sealingKeys, 'hook-query-secret', '****']) {
        expect(value, 'a generated value').toBeTruthy();
        expect(text).not.toContain(value);
      }
      expect(text).not.toMatch(
        /"(credentials|secrets|client_secret|token_hash|key_hash|key_prefix|token|webhook_secret|access_token|refresh_token|code)":/,
      );
    }
  });

  it('answers only the caller project: the other project sees its own changes', async () => {
    const mine = await events({ limit: 100 });
    expect(new Set(mine.map((event) => event.project_id))).toEqual(new Set([a.projectId]));
    const theirs = await events({}, b.apiKey);
    expect(theirs.map((event) => event.action).sort()).toEqual([
      'api_key.created',
      'app_configuration.created',
      'project.created',
    ]);
    expect(await events({ resource_id: ids.account }, b.apiKey)).toEqual([]);
  });

  it('filters by action, resource type and id, actor, and time; pages newest first', async () => {
    const all = await events({ limit: 100 });
    const times = all.map((event) => event.created_at);
    expect([...times].sort().reverse()).toEqual(times);

    const byType = await events({ resource_type: 'linked_account' });
    expect(byType.length).toBe(7);
    expect(byType.every((event) => event.resource_type === 'linked_account')).toBe(true);
    const byCli = await events({ actor: 'cli' });
    expect(byCli.map((event) => event.action).sort()).toEqual([
      'api_key.created',
      'api_key.created',
      'api_key.revoked',
      'project.created',
    ]);
    const byKey = await events({ actor: a.apiKeyId, limit: 100 });
    expect(byKey.length).toBe(all.filter((event) => event.actor_id === a.apiKeyId).length);
    expect(await events({ actor: a.apiKeyId.toUpperCase(), limit: 100 })).toEqual(byKey);
    expect(await events({ actor: 'system' })).toHaveLength(3);

    // A window: since is inclusive, until exclusive.
    const middle = all[10].created_at;
    const newer = await events({ since: middle, limit: 100 });
    const older = await events({ until: middle, limit: 100 });
    expect(newer.length + older.length).toBe(all.length);
    expect(older.every((event) => event.created_at < middle)).toBe(true);

    // Pages of 7 make up the whole list, in order, without repeats.
    const pages: AuditEvent[] = [];
    for (let offset = 0; offset < all.length; offset += 7) {
      const page = await events({ limit: 7, offset });
      expect(page.length).toBeLessThanOrEqual(7);
      pages.push(...page);
    }
    expect(pages.map((event) => event.id)).toEqual(all.map((event) => event.id));
  });

  it('refuses bad filters with 422, naming the field', async () => {
    const refused = async (query: Record<string, string>, field: string) => {
      const res = await app.get(EVENTS, { query, apiKey: a.apiKey });
      expect(res.status, res.text).toBe(422);
      expect(res.body.detail.map((issue: { loc: string[] }) => issue.loc)).toContainEqual(['query', field]);
    };
    await refused({ action: 'app_configuration.exploded' }, 'action');
    await refused({ resource_type: 'planet' }, 'resource_type');
    await refused({ actor: 'someone' }, 'actor');
    await refused({ since: 'yesterday' }, 'since');
    await refused({ until: '2026-13-40T00:00:00Z' }, 'until');
    await refused({ limit: '101' }, 'limit');
    await refused({ limit: '0' }, 'limit');
    await refused({ offset: '-1' }, 'offset');
    await refused({ resource_id: 'x'.repeat(256) }, 'resource_id');
  });

  it('needs an API key', async () => {
    expect((await app.get(EVENTS, { apiKey: null })).status).toBe(401);
  });

  it('records catalogue imports by the command line, with no project (not listed to any project)', async () => {
    const before = await events({ limit: 100 });
    const report = await app.app.get(CatalogService).importPaths(['test/fixtures/catalog/valid'], { secrets: {} });
    expect(report.imported, JSON.stringify(report.problems)).toBe(true);
    const rows: { actor_type: string; project_id: string | null; after: Record<string, unknown> }[] =
      await app.dataSource.query(
        `SELECT actor_type, project_id, after FROM audit_events WHERE action = 'catalog.imported'`,
      );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor_type: 'cli',
      project_id: null,
      after: { source: 'app_folders', apps_added: report.apps.added, functions_added: report.functions.added.length },
    });
    expect(await events({ limit: 100 })).toEqual(before);
  });
});
