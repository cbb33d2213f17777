import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { executionScenario, insertAccount, type Scenario } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from '../execution/upstream.js';

const noInput = {
  parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
} as Partial<FunctionEntity>;

/** Executions per (project, linked-account owner): the database holds the cells, so both databases run this (`.db.`). */
describe('execution budgets per linked-account owner', () => {
  let app: TestApp;
  let upstream: Upstream;
  let projectId: string;
  let shared: Scenario;
  let other: Scenario;
  let ownLimit: Scenario;

  const fn = () =>
    ({
      ...noInput,
      protocol: 'rest',
      protocol_data: { method: 'GET', path: '/thing', server_url: upstream.url },
    }) as Partial<FunctionEntity>;

  beforeAll(async () => {
    app = await TestApp.start({
      OWNER_RATE_LIMIT_EXECUTIONS: '2',
      OWNER_RATE_LIMIT_WINDOW_SECONDS: '60',
      RATE_LIMIT_REQUESTS: '100',
    });
    upstream = await Upstream.start();
    projectId = (await app.ctx.newProject()).projectId;
    shared = await executionScenario(app, { projectId, scheme: 'no_auth', function: fn() });
    other = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: fn(),
      account: { linked_account_owner_id: shared.owner },
    });
    ownLimit = await executionScenario(app, {
      projectId,
      scheme: 'no_auth',
      function: fn(),
      account: { linked_account_owner_id: shared.owner },
      configuration: { owner_execution_limit: 3 },
    });
  });

  afterAll(async () => {
    await upstream?.close();
    await app?.close();
  });

  it('counts an owner over every app of the project, with RateLimit fields, then 429 before the upstream', async () => {
    const first = await shared.execute();
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    // Both budgets are named; the owner's, with fewer left, gives limit, remaining and reset.
    expect(first.headers.get('ratelimit-policy')).toBe('100;w=60, 2;w=60');
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');

    expect((await other.execute()).status).toBe(200);
    const received = upstream.received.length;
    const refused = await shared.execute();
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: expect.stringContaining('Too many executions for this linked-account owner'),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(upstream.received.length).toBe(received);
  });

  it('gives every owner a budget of its own', async () => {
    const newcomer = await insertAccount(app, projectId, shared.app.name, 'no_auth', {}, {});
    const result = await shared.execute(undefined, { owner: newcomer.linked_account_owner_id });
    expect(result.status).toBe(200);
  });

  it('counts an app whose configuration sets its own limit apart, at that limit', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i += 1) {
      statuses.push((await ownLimit.execute()).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('applies to MCP tool calls too', async () => {
    const { body: token } = await app.post('/v1/mcp/tokens', { linked_account_owner_id: shared.owner });
    const call = await app.post(
      '/v1/mcp',
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'execute_function', arguments: { function_name: other.fn.name, function_input: {} } },
      },
      {
        apiKey: null,
        headers: { authorization: `Bearer ${token.token}`, accept: 'application/json, text/event-stream' },
      },
    );
    expect(call.status).toBe(200);
    expect(call.body.result.isError).toBe(true);
    expect(JSON.stringify(call.body.result.content)).toContain('Too many executions for this linked-account owner');
  });

  it('sets, shows and clears a configuration limit through the API, refusing a negative one with 422', async () => {
    const path = `/v1/app-configurations/${shared.app.name}`;
    const set = await app.patch(path, { owner_execution_limit: 50 });
    expect(set.status).toBe(200);
    expect(set.body.owner_execution_limit).toBe(50);
    const cleared = await app.patch(path, { owner_execution_limit: 0 });
    expect(cleared.body.owner_execution_limit).toBeNull();
    const refused = await app.patch(path, { owner_execution_limit: -1 });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain('owner_execution_limit');
  });
});

/** Two service instances need a database server both can reach (the embedded database has one holder). */
describe.skipIf(inject('databaseTemplate').kind !== 'server')('owner budgets on two instances', () => {
  let first: TestApp;
  let second: NestFastifyApplication;
  let secondUrl: string;
  let upstream: Upstream;
  const limits = { OWNER_RATE_LIMIT_EXECUTIONS: '3', OWNER_RATE_LIMIT_WINDOW_SECONDS: '60' };

  beforeAll(async () => {
    first = await TestApp.start(limits);
    ({ app: second, url: secondUrl } = await first.startAnotherInstance('another instance', limits));
    upstream = await Upstream.start();
  });

  afterAll(async () => {
    await upstream?.close();
    await second?.close();
    await first?.close();
  });

  it('share one budget per owner', async () => {
    const { projectId, apiKey } = await first.ctx.newProject();
    const scenario = await executionScenario(first, {
      projectId,
      scheme: 'no_auth',
      function: {
        ...noInput,
        protocol: 'rest',
        protocol_data: { method: 'GET', path: '/x', server_url: upstream.url },
      },
    });
    const onSecond = () =>
      fetch(`${secondUrl}/v1/functions/${scenario.fn.name}/execute`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ linked_account_owner_id: scenario.owner }),
      });
    const statuses = [
      (await scenario.execute()).status,
      (await onSecond()).status,
      (await scenario.execute()).status,
      (await onSecond()).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('grant exactly the budget to concurrent executions of one owner on both instances', async () => {
    const { projectId, apiKey } = await first.ctx.newProject();
    const scenario = await executionScenario(first, {
      projectId,
      scheme: 'no_auth',
      function: {
        ...noInput,
        protocol: 'rest',
        protocol_data: { method: 'GET', path: '/x', server_url: upstream.url },
      },
    });
    const onFirst = () => scenario.execute(undefined, { apiKey }).then((res) => res.status);
    const onSecond = () =>
      fetch(`${secondUrl}/v1/functions/${scenario.fn.name}/execute`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ linked_account_owner_id: scenario.owner }),
      }).then((res) => res.status);
    const statuses = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? onFirst() : onSecond())));
    expect(
      statuses.filter((status) => status === 200),
      JSON.stringify(statuses),
    ).toHaveLength(3);
    expect(
      statuses.filter((status) => status === 429),
      JSON.stringify(statuses),
    ).toHaveLength(9);
  });
});
