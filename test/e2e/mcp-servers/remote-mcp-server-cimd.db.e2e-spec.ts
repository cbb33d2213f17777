import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppEntity } from '../../../src/apps/app.entity.js';
import { McpServersService } from '../../../src/mcp-servers/mcp-servers.service.js';
import { McpTestServer } from '../../helpers/mcp-test-server.js';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { selfSignedCertificate } from '../../helpers/tls.js';
import { callback, startLinking, storedAccount } from '../oauth2/linking.js';
import { OidcServer } from '../oauth2/oidc-server.js';

const DOCUMENT_PATH = '/v1/mcp-servers/oauth-client';

/**
 * Patchbay's OAuth Client ID Metadata Document: when a remote MCP server's authorization server takes
 * one (`client_id_metadata_document_supported`), Patchbay signs in with the URL of its own document as
 * client_id instead of registering; the authorization server fetches the document from Patchbay. The
 * service is reached over https (what the authorization server requires of a client_id URL) through a
 * local TLS front.
 */
describe(
  'a remote MCP server whose authorization server takes Client ID Metadata Documents',
  { timeout: 180_000 },
  () => {
    let app: TestApp;
    let front: Server;
    let base: string;
    let oidc: OidcServer;
    let mcp: McpTestServer;
    let project: TestProject;
    const fetchedByProvider: string[] = [];

    beforeAll(async () => {
      const tls = selfSignedCertificate();
      // The https front of the service: PUBLIC_BASE_URL is its address, known before the service starts.
      front = createServer({ key: tls.key, cert: tls.cert });
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
      base = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
      app = await TestApp.start({ PUBLIC_BASE_URL: base, MCP_SERVERS_ALLOW_PRIVATE_NETWORKS: 'true' });
      const target = new URL(app.url);
      front.on('request', (req, res) => {
        if (req.url === DOCUMENT_PATH) {
          fetchedByProvider.push(req.headers['user-agent'] ?? '');
        }
        const forwarded = httpRequest(
          { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(forwarded);
      });

      // No dynamic registration: the document is the only way in.
      oidc = await OidcServer.start([], { resourceScopes: 'notes', clientIdMetadataDocuments: { trust: tls.cert } });
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
        tools: () => [{ name: 'whoami', description: 'Tells who is signed in.', inputSchema: { type: 'object' } }],
        call: (_name, _args, ctx) => ({ content: [{ type: 'text', text: JSON.stringify({ user: ctx.user }) }] }),
      });
      project = await app.ctx.newProject();
    }, 180_000);

    afterAll(async () => {
      await mcp?.close();
      await oidc?.close();
      front?.closeAllConnections();
      await new Promise<void>((resolve) => (front ? front.close(() => resolve()) : resolve()));
      await app?.close();
    });

    it('serves the document at its own URL, without an API key', async () => {
      const res = await app.get(DOCUMENT_PATH);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        client_id: `${base}${DOCUMENT_PATH}`,
        client_name: 'Patchbay',
        client_uri: base,
        redirect_uris: [`${base}/v1/linked-accounts/oauth2/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      });
      expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    });

    it('signs in with the document as client_id: the provider fetches it, end users link and call as themselves', async () => {
      const added = await app.app.get(McpServersService).add(mcp.url, { appName: 'CIMD_NOTES' });
      expect(added.security_schemes).toEqual(['oauth2']);
      const row = await app.dataSource.getRepository(AppEntity).findOneByOrFail({ name: 'CIMD_NOTES' });
      expect(row.security_schemes.oauth2).toMatchObject({
        client_id: `${base}${DOCUMENT_PATH}`,
        token_endpoint_auth_method: 'none',
        resource: mcp.url,
      });

      const configured = await app.post(
        '/v1/app-configurations',
        { app_name: 'CIMD_NOTES', security_scheme: 'oauth2' },
        { apiKey: project.apiKey },
      );
      expect(configured.status, configured.text).toBe(200);
      const url = await startLinking(app, project.apiKey, { app_name: 'CIMD_NOTES', linked_account_owner_id: 'erin' });
      expect(new URL(url).searchParams.get('client_id')).toBe(`${base}${DOCUMENT_PATH}`);
      expect(fetchedByProvider).toEqual([]);
      const linked = await callback(app, (await oidc.authorize(url, { login: 'erin' })).searchParams);
      expect(linked.status, linked.text).toBe(200);
      // The provider knew Patchbay only from the document it fetched over https.
      expect(fetchedByProvider.length).toBeGreaterThan(0);
      const exchange = oidc.tokenRequests.at(-1)!;
      expect(exchange.status).toBe(200);
      expect(exchange.form).toMatchObject({ client_id: `${base}${DOCUMENT_PATH}`, resource: mcp.url });

      const { credentials } = await storedAccount(app, (linked.body as { id: string }).id);
      await app.app.get(McpServersService).sync('CIMD_NOTES', { token: credentials.access_token });
      const result = await app.post(
        '/v1/functions/CIMD_NOTES__WHOAMI/execute',
        { function_input: {}, linked_account_owner_id: 'erin' },
        { apiKey: project.apiKey },
      );
      expect(result.body).toEqual({ success: true, data: { user: 'erin' }, error: null });
    });
  },
);
