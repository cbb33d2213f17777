import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProjectsService } from '../../../src/projects/projects.service.js';
import { TestApp } from '../../helpers/test-app.js';
import { CLI_ACTOR } from '../../../src/audit/actor.js';

/** Any secured operation does: the guard answers before the controller. */
const SECURED = '/v1/app-configurations';
const CACHE_TTL_MS = 400;

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() > deadline) {
      return value;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('API keys: expiry, last use, listing and revocation', () => {
  let app: TestApp;
  let projects: ProjectsService;
  let projectId: string;

  beforeAll(async () => {
    app = await TestApp.start({ API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) });
    projects = app.app.get(ProjectsService);
    ({ projectId } = await app.ctx.newProject());
  });

  afterAll(async () => {
    await app?.close();
  });

  it('refuses an expired key with 401, exactly like an unknown key', async () => {
    const key = await projects.createApiKey(CLI_ACTOR, projectId, new Date(Date.now() + 1_500));
    expect((await app.get(SECURED, { apiKey: key.api_key })).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const expired = await app.get(SECURED, { apiKey: key.api_key });
    const unknown = await app.get(SECURED, { apiKey: 'pb_unknown' });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual(unknown.body);
    expect(expired.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
  });

  it('answers every one of many concurrent first uses of keys, each with its own outcome', async () => {
    // Not yet cached: each key's lookup is in flight while the other requests arrive.
    const keys = await Promise.all([
      projects.createApiKey(CLI_ACTOR, projectId),
      projects.createApiKey(CLI_ACTOR, projectId),
    ]);
    const sent = Array.from({ length: 30 }, (_, i) => (i % 3 === 2 ? `pb_unknown_${i}` : keys[i % 3].api_key));
    const statuses = await Promise.all(sent.map(async (apiKey) => (await app.get(SECURED, { apiKey })).status));
    expect(statuses).toEqual(sent.map((apiKey) => (apiKey.startsWith('pb_unknown') ? 401 : 200)));
  });

  it('refuses to create a key that has already expired', async () => {
    await expect(projects.createApiKey(CLI_ACTOR, projectId, new Date(Date.now() - 1_000))).rejects.toThrow(
      /is not in the future/,
    );
  });

  it('records the last use at most once a minute, and lists keys without the key itself', async () => {
    const key = await projects.createApiKey(CLI_ACTOR, projectId);
    const listed = async () => (await projects.listApiKeys(projectId)).find((row) => row.id === key.api_key_id);
    expect((await listed())?.last_used_at).toBeNull();

    expect((await app.get(SECURED, { apiKey: key.api_key })).status).toBe(200);
    const first = await until(listed, (row) => row?.last_used_at !== null, 5_000);
    expect(first?.last_used_at).not.toBeNull();

    // Later requests within the minute, across cache reloads, write nothing.
    await new Promise((resolve) => setTimeout(resolve, CACHE_TTL_MS + 100));
    for (let i = 0; i < 5; i += 1) {
      expect((await app.get(SECURED, { apiKey: key.api_key })).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await listed())?.last_used_at).toBe(first?.last_used_at);

    const all = await projects.listApiKeys(projectId);
    const text = JSON.stringify(all);
    expect(text).not.toContain(key.api_key);
    expect(text).not.toContain(key.api_key.slice(0, 10));
    expect(Object.keys(all[0]).sort()).toEqual(['created_at', 'expires_at', 'id', 'last_used_at', 'revoked_at']);
  });

  it('refuses a revoked key at once on the instance that revoked it', async () => {
    const key = await projects.createApiKey(CLI_ACTOR, projectId);
    expect((await app.get(SECURED, { apiKey: key.api_key })).status).toBe(200);
    await projects.revokeApiKey(CLI_ACTOR, key.api_key_id);
    expect((await app.get(SECURED, { apiKey: key.api_key })).status).toBe(401);
  });
});

/** Two service instances need a database server both can reach (the embedded database has one holder). */
describe.skipIf(inject('databaseTemplate').kind !== 'server')('API key revocation on two instances', () => {
  let first: TestApp;
  let second: NestFastifyApplication;
  let secondUrl: string;

  beforeAll(async () => {
    first = await TestApp.start({ API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) });
    ({ app: second, url: secondUrl } = await first.startAnotherInstance('another instance', {
      API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS),
    }));
    await first.ctx.newProject();
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('reaches the other instance within API_KEY_CACHE_TTL_MS', async () => {
    const projects = first.app.get(ProjectsService);
    const { project_id: projectId } = await projects.createProject(CLI_ACTOR, 'revoked elsewhere');
    const key = await projects.createApiKey(CLI_ACTOR, projectId);
    const onSecond = () => fetch(`${secondUrl}${SECURED}`, { headers: { 'x-api-key': key.api_key } });
    expect((await onSecond()).status).toBe(200); // now cached on the second instance

    await projects.revokeApiKey(CLI_ACTOR, key.api_key_id);
    const revokedAt = Date.now();
    const refused = await until(onSecond, (response) => response.status === 401, CACHE_TTL_MS + 2_000);
    const elapsed = Date.now() - revokedAt;
    expect(refused.status).toBe(401);
    // The bound is the cache's TTL; the margin covers one request on a loaded machine.
    expect(elapsed).toBeLessThanOrEqual(CACHE_TTL_MS + 500);
  });
});
