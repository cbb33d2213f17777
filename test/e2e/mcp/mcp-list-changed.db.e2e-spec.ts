import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { executionScenario, pingFunction, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { connectModern, type McpRevision, REVISIONS } from './mcp-client.js';

/** A list_changed counter with a wait for the n-th one. */
function changeCounter() {
  const changes: number[] = [];
  let waiting: (() => void)[] = [];
  const seen = () => {
    changes.push(Date.now());
    for (const resolve of waiting.splice(0)) {
      resolve();
    }
  };
  const nextChange = (count: number, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no list_changed #${count} within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        if (changes.length >= count) {
          clearTimeout(timer);
          resolve();
        } else {
          waiting.push(check);
        }
      };
      check();
    });
  return { changes, seen, nextChange, stop: () => (waiting = []) };
}

/**
 * A direct-mode client watching its tool list in `revision`'s way: 2025-11-25, a session's
 * standalone GET stream (v1 SDK client); 2026-07-28, a `subscriptions/listen` stream (v2 SDK
 * client). Resolves once the stream is held by the service.
 */
async function watcherOf(revision: McpRevision, baseUrl: string, headers: Record<string, string>) {
  if (revision === '2025-11-25') {
    return watchingClient(baseUrl, headers);
  }
  const { client } = await connectModern(baseUrl, { headers, query: { mode: 'direct' } });
  const counter = changeCounter();
  client.setNotificationHandler('notifications/tools/list_changed', counter.seen);
  const subscription = await client.listen({ toolsListChanged: true });
  expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
  return {
    client,
    changes: counter.changes,
    nextChange: counter.nextChange,
    close: async () => {
      counter.stop();
      await subscription.close();
      await client.close();
    },
  };
}

/**
 * A direct-mode SDK client with a session whose standalone GET stream is open: `streaming`
 * resolves once the service answered that GET (the stream is then held), `changes` counts the
 * list_changed notifications received.
 */
async function watchingClient(baseUrl: string, headers: Record<string, string>) {
  let opened!: () => void;
  const streaming = new Promise<void>((resolve) => (opened = resolve));
  const url = new URL('/v1/mcp', baseUrl);
  url.searchParams.set('mode', 'direct');
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers },
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'GET' && response.status === 200) {
        opened();
      }
      return response;
    },
  });
  const client = new Client({ name: 'watcher', version: '1' });
  const changes: number[] = [];
  let notify: (() => void)[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes.push(Date.now());
    for (const resolve of notify.splice(0)) {
      resolve();
    }
  });
  await client.connect(transport);
  await streaming;
  const nextChange = (count: number, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no list_changed #${count} within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        if (changes.length >= count) {
          clearTimeout(timer);
          resolve();
        } else {
          notify.push(check);
        }
      };
      check();
    });
  return {
    client,
    changes,
    nextChange,
    close: async () => {
      notify = [];
      await client.close();
    },
  };
}

async function projectWithTool(app: TestApp) {
  const { projectId, apiKey } = await app.ctx.newProject();
  const scenario = await executionScenario(app, {
    projectId,
    scheme: 'no_auth',
    function: pingFunction('http://127.0.0.1:9/api'),
  });
  const headers = { 'x-api-key': apiKey, 'x-linked-account-owner-id': scenario.owner };
  return { apiKey, scenario, headers };
}

describe('notifications/tools/list_changed: GET stream (2025-11-25) and subscriptions/listen (2026-07-28)', () => {
  let app: TestApp;
  let apiKey: string;
  let scenario: Scenario;
  let headers: Record<string, string>;

  beforeAll(async () => {
    app = await TestApp.start();
    ({ apiKey, scenario, headers } = await projectWithTool(app));
  });

  afterAll(async () => {
    await app?.close();
  });

  it('declares tools.listChanged at initialize', async () => {
    const { client, close } = await watchingClient(app.url, headers);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    await close();
  });

  it.each(REVISIONS)(
    "%s: tells a client's stream when a configuration of its project changes through REST, and no other project's",
    async (revision) => {
      ({ apiKey, scenario, headers } = await projectWithTool(app));
      const watcher = await watcherOf(revision, app.url, headers);
      const other = await projectWithTool(app);
      const bystander = await watcherOf(revision, app.url, other.headers);
      const appName = scenario.app.name;
      expect((await watcher.client.listTools()).tools).toHaveLength(1);

      const disabled = await app.patch(`/v1/app-configurations/${appName}`, { enabled: false }, { apiKey });
      expect(disabled.status).toBe(200);
      await watcher.nextChange(1);
      expect((await watcher.client.listTools()).tools).toHaveLength(0);

      await app.patch(`/v1/app-configurations/${appName}`, { enabled: true }, { apiKey });
      await watcher.nextChange(2);
      expect((await watcher.client.listTools()).tools).toHaveLength(1);

      const deleted = await app.delete(`/v1/app-configurations/${appName}`, { apiKey });
      expect(deleted.status).toBe(200);
      await watcher.nextChange(3);
      expect((await watcher.client.listTools()).tools).toHaveLength(0);

      const created = await app.post(
        '/v1/app-configurations',
        { app_name: appName, security_scheme: 'no_auth' },
        { apiKey },
      );
      expect(created.status).toBe(200);
      await watcher.nextChange(4);
      expect((await watcher.client.listTools()).tools).toHaveLength(1);

      // The other project's stream heard none of that; its own change reaches it once.
      expect(bystander.changes).toHaveLength(0);
      await app.patch(
        `/v1/app-configurations/${other.scenario.app.name}`,
        { enabled: false },
        {
          apiKey: other.apiKey,
        },
      );
      await bystander.nextChange(1);
      expect(watcher.changes).toHaveLength(4);
      await watcher.close();
      await bystander.close();
    },
  );

  it('2026-07-28: ends a listen stream whose token was revoked, at the next change of its project', async () => {
    const own = await projectWithTool(app);
    const token = await app.post(
      '/v1/mcp/tokens',
      { linked_account_owner_id: own.scenario.owner },
      { apiKey: own.apiKey },
    );
    const { client } = await connectModern(app.url, {
      headers: { authorization: `Bearer ${token.body.token}` },
      query: { mode: 'direct' },
    });
    const subscription = await client.listen({ toolsListChanged: true });
    expect((await app.delete(`/v1/mcp/tokens/${token.body.id}`, { apiKey: own.apiKey })).status).toBe(204);
    await app.patch(`/v1/app-configurations/${own.scenario.app.name}`, { enabled: false }, { apiKey: own.apiKey });
    expect(await subscription.closed).toBe('remote');
    await client.close();
  });

  it('answers GET without a session 405 with Allow, an unknown session 404, a bad mode 400, no credentials 401', async () => {
    const get = (extra: Record<string, string>) =>
      fetch(new URL('/v1/mcp', app.url), { headers: { accept: 'text/event-stream', ...extra } });
    const noSession = await get(headers);
    expect(noSession.status).toBe(405);
    expect(noSession.headers.get('allow')).toBe('POST, DELETE');
    const unknown = await get({ ...headers, 'mcp-session-id': '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/session/i);
    const badMode = await fetch(new URL('/v1/mcp?mode=everything', app.url), {
      headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': '00000000-0000-4000-8000-000000000000' },
    });
    expect(badMode.status).toBe(400);
    const anonymous = await get({ 'mcp-session-id': '00000000-0000-4000-8000-000000000000' });
    expect(anonymous.status).toBe(401);
    expect((await get({})).status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it("closes a session's stream when the session is deleted", async () => {
    let ended!: () => void;
    const streamEnded = new Promise<void>((resolve) => (ended = resolve));
    const { client, close } = await watchingClient(app.url, headers);
    const transport = client.transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId as string;
    const response = await fetch(new URL('/v1/mcp?mode=direct', app.url), {
      headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': sessionId },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    void response
      .text()
      .catch(() => '')
      .then(() => ended());
    await transport.terminateSession();
    await streamEnded;
    await close();
  });
});

/** Two service instances need a database server both can reach (the embedded database has one holder). */
describe.skipIf(inject('databaseTemplate').kind !== 'server')('list_changed across two instances', () => {
  let first: TestApp;
  let second: NestFastifyApplication | undefined;
  let secondUrl: string;

  beforeAll(async () => {
    first = await TestApp.start();
    ({ app: second, url: secondUrl } = await first.startAnotherInstance());
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it.each(REVISIONS)(
    '%s: delivers a change made through instance B to a client whose stream is on instance A',
    async (revision) => {
      const { apiKey, scenario, headers } = await projectWithTool(first);
      const watcher = await watcherOf(revision, first.url, headers);
      const res = await fetch(new URL(`/v1/app-configurations/${scenario.app.name}`, secondUrl), {
        method: 'PATCH',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ enabled: false }),
      });
      expect(res.status).toBe(200);
      await watcher.nextChange(1);
      expect((await watcher.client.listTools()).tools).toHaveLength(0);
      await watcher.close();
    },
  );

  it('ends held streams of both revisions at shutdown, so the instance exits promptly', async () => {
    const { headers } = await projectWithTool(first);
    const watcher = await watchingClient(secondUrl, headers);
    const listener = await watcherOf('2026-07-28', secondUrl, headers);
    const started = Date.now();
    await second?.close();
    second = undefined;
    expect(Date.now() - started).toBeLessThan(3_000);
    await watcher.close();
    await listener.close().catch(() => undefined);
  });
});
