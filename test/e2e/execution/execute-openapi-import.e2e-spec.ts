import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiImportService } from '../../../src/catalog/openapi/openapi-import.service.js';
import { insertAccount, insertConfiguration } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from './upstream.js';

/** GitHub's official description (`@octokit/openapi` 23.0.2), trimmed to the four path items used here. */
const GITHUB = 'test/fixtures/openapi/github/api.github.com.json';

/**
 * GitHub's official description imported, then a handful of its functions executed against a
 * stand-in server with a bearer token: the request on the wire is exactly what GitHub's API expects.
 */
describe("functions imported from GitHub's OpenAPI description execute as GitHub expects", { timeout: 240_000 }, () => {
  let app: TestApp;
  let upstream: Upstream;
  let owner: string;
  const names = new Map<string, string>();

  beforeAll(async () => {
    app = await TestApp.start();
    upstream = await Upstream.start();
    const report = await app.app.get(OpenApiImportService).importSources([GITHUB], {
      secrets: {},
      appName: 'GitHub',
      server: `${upstream.url}/api`,
      // GitHub's description declares no security scheme; its API takes a bearer token.
      addSchemes: ['http_bearer'],
      include: ['issues/create', 'repos/list-for-user', 'issues/add-labels', 'repos/delete'],
    });
    expect(report.refused).toEqual([]);
    expect(report.apps.added).toEqual(['GITHUB']);
    for (const fn of report.functions.added) {
      names.set(fn, fn);
    }
    const projectId = (await app.ctx.newProject()).projectId;
    await insertConfiguration(app, projectId, 'GITHUB', { security_scheme: 'http_bearer' });
    owner = (await insertAccount(app, projectId, 'GITHUB', 'http_bearer', { token: 'ghp_stand_in_token' }))
      .linked_account_owner_id;
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
  });

  const execute = (name: string, input: unknown) =>
    app.post(`/v1/functions/${name}/execute`, { function_input: input, linked_account_owner_id: owner });

  it('imports the four operations under readable names within 48 characters', () => {
    expect([...names.keys()].sort()).toEqual([
      'GITHUB__ISSUES_ADD_LABELS',
      'GITHUB__ISSUES_CREATE',
      'GITHUB__REPOS_DELETE',
      'GITHUB__REPOS_LIST_FOR_USER',
    ]);
  });

  it('POST with path parameters and a JSON body', async () => {
    const result = await execute('GITHUB__ISSUES_CREATE', {
      path: { owner: 'octo', repo: 'hello-world' },
      body: { title: 'Found a bug', body: 'It breaks', labels: ['bug'] },
    });
    expect(result.body).toMatchObject({ success: true });
    expect(result.status).toBe(200);
    const received = upstream.last;
    expect(received.method).toBe('POST');
    expect(received.path).toBe('/api/repos/octo/hello-world/issues');
    expect(received.headers.authorization).toBe('Bearer ghp_stand_in_token');
    expect(received.headers['content-type']).toBe('application/json');
    expect(JSON.parse(received.body)).toEqual({ title: 'Found a bug', body: 'It breaks', labels: ['bug'] });
  });

  it('GET with a path parameter and query parameters', async () => {
    const result = await execute('GITHUB__REPOS_LIST_FOR_USER', {
      path: { username: 'octocat' },
      query: { type: 'owner', sort: 'updated', per_page: 5 },
    });
    expect(result.status).toBe(200);
    const received = upstream.last;
    expect(received.method).toBe('GET');
    expect(received.url).toBe('/api/users/octocat/repos?type=owner&sort=updated&per_page=5');
    expect(received.headers.authorization).toBe('Bearer ghp_stand_in_token');
    expect(received.body).toBe('');
  });

  it('DELETE with path parameters only', async () => {
    await execute('GITHUB__REPOS_DELETE', { path: { owner: 'octo', repo: 'old' } });
    expect(upstream.last.method).toBe('DELETE');
    expect(upstream.last.path).toBe('/api/repos/octo/old');
  });

  it('input outside the imported schema is refused before any request', async () => {
    const before = upstream.received.length;
    const result = await execute('GITHUB__ISSUES_CREATE', { path: { owner: 'octo' }, body: { title: 'x' } });
    expect(result.body.success).not.toBe(true);
    expect(JSON.stringify(result.body)).toMatch(/repo/);
    expect(upstream.received.length).toBe(before);
  });
});
