import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpOAuthRecordEntity } from '../../../src/mcp-oauth/oauth-record.entity.js';
import { freePort } from '../../helpers/free-port.js';
import { TestApp } from '../../helpers/test-app.js';
import { selfSignedCertificate } from '../../helpers/tls.js';
import type { OidcServer } from '../oauth2/oidc-server.js';
import { IDP_CLIENT, MemoryOAuthClient, playBrowser, startIdentityProvider } from './mcp-oauth.js';

const REDIRECT = 'http://127.0.0.1:53682/callback';

interface Project {
  projectId: string;
  apiKey: string;
  mcpUrl: string;
  idp: OidcServer;
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

// Each refusal answers the specification's error and issues nothing.
describe('OAuth 2.1 at /v1/mcp/p/{project}: what is refused', () => {
  let app: TestApp;
  let base: string;
  let a: Project;
  let b: Project;
  let documents: Server;
  let documentsUrl: string;
  const documentRequests: string[] = [];
  let caDir: string;

  const newProject = async (name: string): Promise<Project> => {
    const { projectId, apiKey } = await app.ctx.newProject(name);
    const idp = await startIdentityProvider(app, projectId);
    const set = await app.put('/v1/mcp/identity-provider', { issuer: idp.issuer, ...IDP_CLIENT }, { apiKey });
    expect(set.status, set.text).toBe(200);
    return { projectId, apiKey, mcpUrl: `${base}/v1/mcp/p/${projectId}`, idp };
  };

  const register = async (project: Project, redirectUris = [REDIRECT]) => {
    const res = await fetch(`${project.mcpUrl}/reg`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Refusal Tester',
        redirect_uris: redirectUris,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const authorizationUrl = (project: Project, clientId: string, params: Record<string, string | undefined>) => {
    const url = new URL(`${project.mcpUrl}/auth`);
    const all: Record<string, string | undefined> = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'mcp',
      state: 'st-1',
      resource: project.mcpUrl,
      code_challenge_method: 'S256',
      ...params,
    };
    for (const [name, value] of Object.entries(all)) {
      if (value !== undefined) {
        url.searchParams.set(name, value);
      }
    }
    return url;
  };

  const token = async (project: Project, form: Record<string, string>) => {
    const res = await fetch(`${project.mcpUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  /** Registration, authorization through sign-in and consent: a code and what redeeming it needs. */
  const codeFor = async (project: Project) => {
    const client = await register(project);
    const { verifier, challenge } = pkce();
    const { redirect } = await playBrowser(
      authorizationUrl(project, client.body.client_id, { code_challenge: challenge }),
      base,
      project.idp,
    );
    const code = redirect?.searchParams.get('code');
    expect(code, String(redirect)).toBeTruthy();
    return { clientId: client.body.client_id as string, verifier, code: code as string };
  };

  const tokensFor = async (project: Project) => {
    const { clientId, verifier, code } = await codeFor(project);
    const res = await token(project, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: project.mcpUrl,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { clientId, ...(res.body as { access_token: string; refresh_token: string }) };
  };

  const listTools = (url: string, accessToken: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${accessToken}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  beforeAll(async () => {
    // The client metadata documents are served over https, by a certificate the service is told to trust.
    const tls = selfSignedCertificate();
    caDir = mkdtempSync(join(tmpdir(), 'patchbay-ca-'));
    writeFileSync(join(caDir, 'cert.pem'), tls.cert);
    documents = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
      documentRequests.push(request.url ?? '');
      const url = request.url ?? '';
      const clientId = `${documentsUrl}${url}`;
      const document = JSON.stringify({
        client_id: clientId,
        client_name: 'Metadata Document Agent',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      });
      if (url.startsWith('/large')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ client_id: clientId, padding: 'x'.repeat(20_000) }));
      } else if (url.startsWith('/slow')) {
        setTimeout(() => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(document);
        }, 3_000);
      } else {
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
        response.end(document);
      }
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentsUrl = `https://127.0.0.1:${(documents.address() as AddressInfo).port}`;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await TestApp.start(
      {
        PUBLIC_BASE_URL: base,
        MCP_CLIENT_METADATA_ALLOW_PRIVATE: 'true',
        MCP_CLIENT_METADATA_CA_FILE: join(caDir, 'cert.pem'),
        MCP_CLIENT_METADATA_TIMEOUT_MS: '1000',
      },
      { port },
    );
    a = await newProject('Project A');
    b = await newProject('Project B');
  });

  afterAll(async () => {
    await a?.idp.close();
    await b?.idp.close();
    documents?.closeAllConnections();
    await new Promise((resolve) => documents?.close(resolve));
    await app?.close();
    if (caDir) {
      rmSync(caDir, { recursive: true, force: true });
    }
  });

  it('a client metadata document client (CIMD) signs in with the SDK; the document is fetched once and cached', async () => {
    const oauth = new MemoryOAuthClient(REDIRECT, 'ignored', `${documentsUrl}/agent.json`);
    const transport = new StreamableHTTPClientTransport(new URL(a.mcpUrl), { authProvider: oauth });
    await expect(new Client({ name: 'cimd', version: '1' }).connect(transport)).rejects.toThrow(UnauthorizedError);
    expect(oauth.information?.client_id).toBe(`${documentsUrl}/agent.json`);
    let consent = '';
    const { redirect } = await playBrowser(oauth.authorizationUrl as URL, base, a.idp, {
      onConsent: (html) => (consent = html),
    });
    expect(consent).toContain('Allow Metadata Document Agent to use Project A?');
    await transport.finishAuth(redirect?.searchParams.get('code') as string);
    const client = new Client({ name: 'cimd', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(a.mcpUrl), { authProvider: oauth }));
    expect((await client.listTools()).tools).toHaveLength(3);
    await client.close();
    expect(documentRequests.filter((url) => url === '/agent.json')).toHaveLength(1);
  });

  it('client metadata documents too large or too slow are refused (invalid_client) and nothing is issued', async () => {
    for (const path of ['/large.json', '/slow.json']) {
      const { challenge } = pkce();
      const res = await fetch(authorizationUrl(a, `${documentsUrl}${path}`, { code_challenge: challenge }), {
        redirect: 'manual',
      });
      expect(res.status, path).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('is not known or could not be verified');
    }
  });

  it('a client metadata document on a private address is refused unless configuration allows it', async () => {
    const port = await freePort();
    const strict = await TestApp.start({ PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }, { port });
    try {
      const { projectId, apiKey } = await strict.ctx.newProject('Strict');
      const idp = await startIdentityProvider(strict, projectId);
      await strict.put('/v1/mcp/identity-provider', { issuer: idp.issuer, ...IDP_CLIENT }, { apiKey });
      const before = documentRequests.length;
      const { challenge } = pkce();
      const url = new URL(`http://127.0.0.1:${port}/v1/mcp/p/${projectId}/auth`);
      url.search = new URLSearchParams({
        client_id: `${documentsUrl}/private.json`,
        response_type: 'code',
        redirect_uri: REDIRECT,
        resource: `http://127.0.0.1:${port}/v1/mcp/p/${projectId}`,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString();
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      // The connection was refused before any request reached the address.
      expect(documentRequests.length).toBe(before);
      await idp.close();
    } finally {
      await strict.close();
    }
  });

  it('PKCE is required (no challenge: invalid_request) and checked (wrong verifier: invalid_grant)', async () => {
    const client = await register(a);
    const missing = await playBrowser(authorizationUrl(a, client.body.client_id, {}), base, a.idp);
    expect(missing.redirect?.searchParams.get('error')).toBe('invalid_request');
    expect(missing.redirect?.searchParams.get('code')).toBeNull();
    expect(missing.redirect?.searchParams.get('iss')).toBe(a.mcpUrl);

    const { clientId, code } = await codeFor(a);
    const wrong = await token(a, {
      grant_type: 'authorization_code',
      code,
      code_verifier: pkce().verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect(wrong.body.access_token).toBeUndefined();
  });

  it('redirect URIs: exact match, and https except on loopback; an open redirect is never followed', async () => {
    const client = await register(a);
    for (const redirect of [
      'https://evil.example/callback',
      `${REDIRECT}/extra`,
      'http://127.0.0.1:53682/callback?x=1',
    ]) {
      const res = await fetch(
        authorizationUrl(a, client.body.client_id, { redirect_uri: redirect, code_challenge: pkce().challenge }),
        { redirect: 'manual' },
      );
      expect(res.status, redirect).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('did not register');
    }
    const plainHttp = await register(a, ['http://app.example/callback']);
    expect(plainHttp.status).toBe(400);
    // RFC 7591 §3.2.2.
    expect(plainHttp.body.error).toBe('invalid_redirect_uri');
    const claude = await register(a, ['https://claude.ai/api/mcp/auth_callback']);
    expect(claude.status).toBe(201);
    const chatgpt = await register(a, ['https://chatgpt.com/connector_platform_oauth_redirect']);
    expect(chatgpt.status).toBe(201);
  });

  it('the resource is required and must be this address (invalid_target)', async () => {
    const client = await register(a);
    for (const resource of [undefined, b.mcpUrl, `${base}/v1/mcp`]) {
      const { redirect } = await playBrowser(
        authorizationUrl(a, client.body.client_id, { resource, code_challenge: pkce().challenge }),
        base,
        a.idp,
      );
      expect(redirect?.searchParams.get('error'), String(resource)).toBe('invalid_target');
      expect(redirect?.searchParams.get('code')).toBeNull();
    }
  });

  it('a code works once (reuse: invalid_grant, and the tokens it gave are revoked); an expired code: invalid_grant', async () => {
    const { clientId, verifier, code } = await codeFor(a);
    const form = {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    };
    const first = await token(a, form);
    expect(first.status).toBe(200);
    expect((await listTools(a.mcpUrl, first.body.access_token)).status).toBe(200);
    const again = await token(a, form);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect((await listTools(a.mcpUrl, first.body.access_token)).status).toBe(401);

    const late = await codeFor(a);
    await app.dataSource
      .getRepository(McpOAuthRecordEntity)
      .update({ project_id: a.projectId, model: 'AuthorizationCode' }, { expires_at: new Date(Date.now() - 1000) });
    const expired = await token(a, {
      grant_type: 'authorization_code',
      code: late.code,
      code_verifier: late.verifier,
      client_id: late.clientId,
      redirect_uri: REDIRECT,
    });
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('invalid_grant');
  });

  it('an authorization request without scope is given the default, mcp (RFC 6749 §3.3), not access_denied', async () => {
    const client = await register(a);
    for (const scope of [undefined, '']) {
      const { verifier, challenge } = pkce();
      const { redirect, stoppedAt } = await playBrowser(
        authorizationUrl(a, client.body.client_id, { code_challenge: challenge, scope }),
        base,
        a.idp,
      );
      const code = redirect?.searchParams.get('code');
      expect(code, String(redirect ?? `${stoppedAt?.url.href} ${stoppedAt?.html}`)).toBeTruthy();
      const issued = await token(a, {
        grant_type: 'authorization_code',
        code: code as string,
        code_verifier: verifier,
        client_id: client.body.client_id,
        redirect_uri: REDIRECT,
        resource: a.mcpUrl,
      });
      expect(issued.status, JSON.stringify(issued.body)).toBe(200);
      expect(issued.body.scope).toBe('mcp');
      expect((await listTools(a.mcpUrl, issued.body.access_token)).status).toBe(200);
    }
  });

  it("a token is refused at another project's address and at /v1/mcp (401 invalid_token)", async () => {
    const { access_token } = await tokensFor(a);
    expect((await listTools(a.mcpUrl, access_token)).status).toBe(200);
    const elsewhere = await listTools(b.mcpUrl, access_token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/v1/mcp/p/${b.projectId}"`,
    );
    expect((await listTools(`${base}/v1/mcp`, access_token)).status).toBe(401);
    // Project A's API key does not open project B's address either.
    const key = await fetch(b.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-api-key': a.apiKey,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(key.status).toBe(401);
  });

  it('refresh tokens rotate; reusing one is detected and revokes the grant (invalid_grant)', async () => {
    const { clientId, refresh_token } = await tokensFor(a);
    const rotated = await token(a, { grant_type: 'refresh_token', refresh_token, client_id: clientId });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(refresh_token);
    expect((await listTools(a.mcpUrl, rotated.body.access_token)).status).toBe(200);
    const reused = await token(a, { grant_type: 'refresh_token', refresh_token, client_id: clientId });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    const afterReuse = await token(a, {
      grant_type: 'refresh_token',
      refresh_token: rotated.body.refresh_token,
      client_id: clientId,
    });
    expect(afterReuse.status).toBe(400);
    expect((await listTools(a.mcpUrl, rotated.body.access_token)).status).toBe(401);
  });

  it('revoking the MCP token (DELETE /v1/mcp/tokens/{id}) refuses the access token at once and its refresh', async () => {
    const { clientId, access_token, refresh_token } = await tokensFor(a);
    const call = await fetch(a.mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${access_token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_functions', arguments: { intent: 'notes' } },
      }),
    });
    expect(call.status).toBe(200);
    const rows = await app.dataSource.query(
      `SELECT id FROM mcp_tokens WHERE project_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [a.projectId],
    );
    const revoked = await app.delete(`/v1/mcp/tokens/${rows[0].id as string}`, { apiKey: a.apiKey });
    expect(revoked.status).toBe(204);
    expect((await listTools(a.mcpUrl, access_token)).status).toBe(401);
    const refreshed = await token(a, { grant_type: 'refresh_token', refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  // A verified access token is kept in memory a few seconds (API_KEY_CACHE_TTL_MS): every revocation forgets it here.
  it('an access token already used is refused at once once revoked at the revocation endpoint, or its sign-in removed', async () => {
    const { clientId, access_token } = await tokensFor(a);
    expect((await listTools(a.mcpUrl, access_token)).status).toBe(200);
    const revoked = await fetch(`${a.mcpUrl}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: access_token, client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    expect((await listTools(a.mcpUrl, access_token)).status).toBe(401);

    const c = await newProject('Project C');
    try {
      const tokens = await tokensFor(c);
      expect((await listTools(c.mcpUrl, tokens.access_token)).status).toBe(200);
      expect((await app.delete('/v1/mcp/identity-provider', { apiKey: c.apiKey })).status).toBe(204);
      expect((await listTools(c.mcpUrl, tokens.access_token)).status).toBe(401);
    } finally {
      await c.idp.close();
    }
  });

  it("a sign-in at another project's identity provider is refused at this project's callback, and nothing is issued", async () => {
    const client = await register(b);
    // The browser starts at project B and signs in at B's identity provider; its answer is then replayed at A.
    const start = authorizationUrl(b, client.body.client_id, { code_challenge: pkce().challenge });
    const first = await fetch(start, { redirect: 'manual' });
    const interaction = new URL(first.headers.get('location') as string, base);
    const cookies = first.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const toIdp = await fetch(interaction, { redirect: 'manual', headers: { cookie: cookies } });
    const idpUrl = new URL(toIdp.headers.get('location') as string);
    expect(idpUrl.origin).toBe(b.idp.issuer);
    const back = await b.idp.authorize(idpUrl.href, { login: 'mallory' });
    expect(back.pathname).toBe(`/v1/mcp/p/${b.projectId}/sign-in/callback`);
    const replayed = await fetch(`${a.mcpUrl}/sign-in/callback${back.search}`, { redirect: 'manual' });
    expect(replayed.status).toBe(400);
    expect(replayed.headers.get('location')).toBeNull();
    expect(await replayed.text()).toContain('unknown or expired');
    const tokens = await app.dataSource.query(
      `SELECT count(*)::int AS n FROM mcp_tokens WHERE linked_account_owner_id = 'mallory'`,
    );
    expect(tokens[0].n).toBe(0);
  });
});
