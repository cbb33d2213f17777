import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { executionScenario, pingFunction, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';
import { newOAuth2App } from '../oauth2/linking.js';

/** Two service instances need a database server both can reach (the embedded database has one holder). */
describe.skipIf(inject('databaseTemplate').kind !== 'server')('/v1/mcp on two instances sharing one PostgreSQL', () => {
  let first: TestApp;
  let second: NestFastifyApplication;
  let secondUrl: string;
  let upstream: Upstream;
  let apiKey: string;
  let scenario: Scenario;

  beforeAll(async () => {
    first = await TestApp.start();
    upstream = await Upstream.start();
    ({ app: second, url: secondUrl } = await first.startAnotherInstance());
    let projectId: string;
    ({ projectId, apiKey } = await first.ctx.newProject());
    scenario = await executionScenario(first, {
      projectId,
      scheme: 'no_auth',
      function: pingFunction(`${upstream.url}/api`),
    });
  });

  afterAll(async () => {
    await second?.close();
    await upstream?.close();
    await first?.close();
  });

  /** A client whose requests go to the two instances in turn. */
  const alternatingClient = async (headers: Record<string, string>, capabilities = {}) => {
    const served: string[] = [];
    let turn = 0;
    const origins = () => [first.url, secondUrl];
    const transport = new StreamableHTTPClientTransport(new URL('/v1/mcp', first.url), {
      requestInit: { headers },
      fetch: (input, init) => {
        const target = new URL(String(input instanceof Request ? input.url : input));
        const origin = origins()[turn++ % 2];
        served.push(origin);
        return fetch(new URL(`${target.pathname}${target.search}`, origin), init);
      },
    });
    const client = new Client({ name: 'alternating', version: '1' }, { capabilities });
    await client.connect(transport);
    return { client, served };
  };

  it('serves one session alternately from both instances', async () => {
    const { client, served } = await alternatingClient({
      'x-api-key': apiKey,
      'x-linked-account-owner-id': scenario.owner,
    });
    for (let i = 0; i < 3; i++) {
      const result = await client.callTool({
        name: 'execute_function',
        arguments: { function_name: scenario.fn.name, function_input: {} },
      });
      expect(result.structuredContent).toEqual({ success: true, data: { ok: true } });
    }
    expect(new Set(served)).toEqual(new Set([first.url, secondUrl]));
    expect(upstream.received).toHaveLength(3);
    await client.close();
  });

  it("knows on the other instance that the session's client declared URL elicitation", async () => {
    const row = await newOAuth2App(first, apiKey, {
      scheme: {
        location: 'header',
        name: 'Authorization',
        prefix: 'Bearer',
        client_id: 'c',
        authorize_url: 'https://auth.example.com/authorize',
        access_token_url: 'https://auth.example.com/token',
      },
      appClientSecret: 's',
    });
    const fn = await first.ctx.newFunction(row.name, {
      protocol: 'rest',
      protocol_data: { method: 'GET', path: '/x', server_url: `${upstream.url}/api` },
      parameters: { type: 'object', properties: {}, required: [], visible: [] },
    });
    const { client } = await alternatingClient(
      { 'x-api-key': apiKey, 'x-linked-account-owner-id': 'nobody-yet' },
      { elicitation: { url: {} } },
    );
    for (let i = 0; i < 2; i++) {
      await expect(
        client.callTool({ name: 'execute_function', arguments: { function_name: fn.name, function_input: {} } }),
      ).rejects.toBeInstanceOf(UrlElicitationRequiredError);
    }
    await client.close();
  });

  it('refuses a revoked token on the other instance at once', async () => {
    const token = await first.post('/v1/mcp/tokens', { linked_account_owner_id: scenario.owner }, { apiKey });
    const revoked = await fetch(`${secondUrl}/v1/mcp/tokens/${token.body.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': apiKey },
    });
    expect(revoked.status).toBe(204);
    const res = await fetch(`${first.url}/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token.body.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
  });
});
