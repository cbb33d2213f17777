import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import { McpServersService } from '../../../src/mcp-servers/mcp-servers.service.js';
import { McpTestServer } from '../../helpers/mcp-test-server.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { ConnectBrowser, CONNECT_LINKS, createLink } from '../connect-links/connect.js';
import { connectMcp } from '../mcp/mcp-client.js';
import { callback, nowSeconds, startLinking, storedAccount } from '../oauth2/linking.js';
import { OidcServer } from '../oauth2/oidc-server.js';

const PUBLIC_BASE_URL = 'http://patchbay.test';
/** Each account's own notes at the server: what an end user sees must be theirs only. */
const NOTES = new Map([
  ['carol', ['carol: call the plumber']],
  ['dave', ['dave: renew the passport']],
]);

/**
 * A remote MCP server behind OAuth, as the MCP authorization specification has it: Patchbay finds its
 * authorization server through the server's protected resource metadata, registers itself there, and
 * each end user signs in through Patchbay's usual linking flow; tokens are bound to the server
 * (resource indicators), sent on every call and refreshed when they expire.
 */
describe('a remote MCP server behind OAuth 2.0', { timeout: 180_000 }, () => {
  let app: TestApp;
  let oidc: OidcServer;
  let mcp: McpTestServer;
  let project: TestProject;

  beforeAll(async () => {
    app = await TestApp.start({ PUBLIC_BASE_URL, MCP_SERVERS_ALLOW_PRIVATE_NETWORKS: 'true' });
    oidc = await OidcServer.start([], { registration: true, resourceScopes: 'notes' });
    mcp = await McpTestServer.start({
      era: 'modern',
      oauth: {
        issuer: oidc.issuer,
        scopes: ['notes'],
        verify: async (token, resource) => {
          const found = await oidc.provider.AccessToken.find(token);
          const audiences = found ? [found.aud ?? []].flat() : [];
          return found && !found.isExpired && audiences.includes(resource) ? found.accountId : undefined;
        },
      },
      tools: () => [
        { name: 'whoami', description: 'Tells who is signed in.', inputSchema: { type: 'object' } },
        { name: 'list_notes', description: 'Lists my notes.', inputSchema: { type: 'object' } },
      ],
      call: (name, _args, ctx) =>
        name === 'list_notes'
          ? {
              content: [{ type: 'text', text: JSON.stringify(NOTES.get(ctx.user ?? '') ?? []) }],
              structuredContent: { user: ctx.user, notes: NOTES.get(ctx.user ?? '') ?? [] },
            }
          : { content: [{ type: 'text', text: JSON.stringify({ user: ctx.user }) }] },
    });
    project = await app.ctx.newProject();
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
    await oidc?.close();
    await app?.close();
  });

  const service = () => app.app.get(McpServersService);

  it('discovers the authorization server, registers Patchbay and links end users through the usual flow', async () => {
    const added = await service().add(mcp.url, { appName: 'SECURE_NOTES' });
    expect(added.security_schemes).toEqual(['oauth2']);
    expect(added.functions.added).toEqual([]);
    const described = await app.get('/v1/apps/SECURE_NOTES', { apiKey: project.apiKey });
    expect(described.status).toBe(200);

    const configured = await app.post(
      '/v1/app-configurations',
      { app_name: 'SECURE_NOTES', security_scheme: 'oauth2' },
      { apiKey: project.apiKey },
    );
    expect(configured.status, configured.text).toBe(200);
    const url = await startLinking(app, project.apiKey, { app_name: 'SECURE_NOTES', linked_account_owner_id: 'alice' });
    const authorize = new URL(url);
    expect(authorize.origin).toBe(oidc.issuer);
    expect(authorize.searchParams.get('resource')).toBe(mcp.url);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const linked = await callback(app, (await oidc.authorize(url, { login: 'alice' })).searchParams);
    expect(linked.status, linked.text).toBe(200);
    const account = (linked.body as { id: string }).id;
    // The code was exchanged for a token bound to the server: the token request named it too.
    expect(oidc.tokenRequests.at(-1)?.form.resource).toBe(mcp.url);

    // Its tools are read with an end user's token.
    const { credentials } = await storedAccount(app, account);
    const synced = await service().sync('SECURE_NOTES', { token: credentials.access_token });
    expect(synced.functions.added.sort()).toEqual(['SECURE_NOTES__LIST_NOTES', 'SECURE_NOTES__WHOAMI']);

    const execute = () =>
      app.post(
        '/v1/functions/SECURE_NOTES__WHOAMI/execute',
        { function_input: {}, linked_account_owner_id: 'alice' },
        { apiKey: project.apiKey },
      );
    expect((await execute()).body).toEqual({ success: true, data: { user: 'alice' }, error: null });
    expect(mcp.calls().at(-1)?.headers.authorization).toBe(`Bearer ${credentials.access_token}`);

    // The token expires: refreshed before the call, for the same resource, and the call goes through.
    const expired = app.app.get(SecretBox).sealJson({ ...credentials, expires_at: nowSeconds() - 10 });
    await app.dataSource.getRepository(LinkedAccountEntity).update({ id: account }, { credentials: expired });
    await app.announce('linked_accounts');
    const before = oidc.tokenRequests.length;
    expect((await execute()).body).toEqual({ success: true, data: { user: 'alice' }, error: null });
    const refresh = oidc.tokenRequests[before];
    expect(refresh.form).toMatchObject({ grant_type: 'refresh_token', resource: mcp.url });
    expect(refresh.status).toBe(200);
    const refreshed = (await storedAccount(app, account)).credentials;
    expect(refreshed.access_token).not.toBe(credentials.access_token);
    expect(mcp.calls().at(-1)?.headers.authorization).toBe(`Bearer ${refreshed.access_token}`);
  });

  it('a token the server does not take (another resource, revoked) is a clear failure naming re-linking', async () => {
    const account = await app.dataSource.getRepository(LinkedAccountEntity).findOneBy({ app_name: 'SECURE_NOTES' });
    const { credentials } = await storedAccount(app, account!.id);
    const forged = app.app.get(SecretBox).sealJson({ ...credentials, access_token: 'not-a-token-of-this-server' });
    await app.dataSource.getRepository(LinkedAccountEntity).update({ id: account!.id }, { credentials: forged });
    await app.announce('linked_accounts');
    const result = await app.post(
      '/v1/functions/SECURE_NOTES__WHOAMI/execute',
      { function_input: {}, linked_account_owner_id: account!.linked_account_owner_id },
      { apiKey: project.apiKey },
    );
    expect(result.body.success).toBe(false);
    expect(result.body.error).toMatch(/refused the credentials \(401\): the account may need to be linked again/);
  });

  it('two end users linked through connect links each see only their own data, over REST and over MCP', async () => {
    // The tools were read in the first test, with an end user's token.
    const linkThrough = async (owner: string) => {
      const link = await createLink(app, project.apiKey, { app_name: 'SECURE_NOTES', linked_account_owner_id: owner });
      const browser = new ConnectBrowser(app);
      const page = await browser.open(link.url);
      expect(page.status, page.text).toBe(200);
      const started = await browser.submit(page, {});
      expect(started.status, started.text).toBe(303);
      const authorize = new URL(started.headers.get('location')!);
      expect(authorize.origin).toBe(oidc.issuer);
      expect(authorize.searchParams.get('resource')).toBe(mcp.url);
      const back = await oidc.authorize(authorize.href, { login: owner });
      const returned = await fetch(`${app.url}${back.pathname}${back.search}`, { redirect: 'manual' });
      expect(returned.status).toBe(302);
      const done = new URL(returned.headers.get('location')!);
      const confirmed = await browser.request('GET', `${done.pathname}${done.search}`);
      expect(confirmed.status).toBe(200);
      expect(confirmed.text).toContain('Account linked');
      const status = await app.get(`${CONNECT_LINKS}/${link.id}`, { apiKey: project.apiKey });
      expect(status.body).toMatchObject({ status: 'completed' });
      expect(oidc.tokenRequests.at(-1)?.form.resource).toBe(mcp.url);
    };
    await linkThrough('carol');
    await linkThrough('dave');

    for (const owner of ['carol', 'dave']) {
      const rest = await app.post(
        '/v1/functions/SECURE_NOTES__LIST_NOTES/execute',
        { function_input: {}, linked_account_owner_id: owner },
        { apiKey: project.apiKey },
      );
      expect(rest.body).toEqual({ success: true, data: { user: owner, notes: NOTES.get(owner) }, error: null });

      const token = await app.post(
        '/v1/mcp/tokens',
        { linked_account_owner_id: owner, apps: ['SECURE_NOTES'] },
        { apiKey: project.apiKey },
      );
      expect(token.status, token.text).toBe(201);
      const { client } = await connectMcp(app.url, {
        headers: { authorization: `Bearer ${token.body.token}` },
        query: { mode: 'direct' },
      });
      try {
        const result = await client.callTool({ name: 'SECURE_NOTES__LIST_NOTES', arguments: {} });
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({
          success: true,
          data: { user: owner, notes: NOTES.get(owner) },
        });
      } finally {
        await client.close();
      }
    }
    // Each call went with that user's own token, which the server resolved to that user alone.
    const users = await Promise.all(
      mcp
        .calls()
        .slice(-4)
        .map((call) => oidc.provider.AccessToken.find(call.headers.authorization!.slice(7))),
    );
    expect(users.map((token) => token?.accountId)).toEqual(['carol', 'carol', 'dave', 'dave']);
  });
});
