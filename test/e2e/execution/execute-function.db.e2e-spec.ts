import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AppConfigurationEntity } from '../../../src/app-configurations/app-configuration.entity.js';
import { FunctionEntity } from '../../../src/functions/function.entity.js';
import { LinkedAccountEntity } from '../../../src/linked-accounts/linked-account.entity.js';
import {
  executionScenario,
  insertAccount,
  insertConfiguration,
  type Scenario,
  type ScenarioOptions,
} from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from './upstream.js';

/** An object node of a catalogue parameter schema. */
const node = (properties: Record<string, unknown>, required: string[] = [], visible = Object.keys(properties)) => ({
  type: 'object',
  properties,
  required,
  visible,
  additionalProperties: false,
});

describe('POST /v1/functions/{function_name}/execute', () => {
  let app: TestApp;
  let upstream: Upstream;
  let projectId: string;

  const rest = (
    method: string,
    path: string,
    parameters: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) =>
    ({
      protocol: 'rest',
      protocol_data: { method, path, server_url: `${upstream.url}/api`, ...extra },
      parameters,
    }) as Partial<FunctionEntity>;

  const searchFunction = () =>
    rest('GET', '/search', node({ query: node({ q: { type: 'string' } }, ['q']) }, ['query']));

  /** A scenario of this file's project: an app with the scheme, a function, the configuration and an account. */
  const scenarioWith = (options: Omit<ScenarioOptions, 'projectId'>) =>
    executionScenario(app, { projectId, ...options });
  /** The same with no credentials, around the search function unless another is given. */
  const noAuthScenario = (options: Partial<Omit<ScenarioOptions, 'projectId' | 'scheme'>> = {}) =>
    scenarioWith({ scheme: 'no_auth', function: searchFunction(), ...options });

  beforeAll(async () => {
    app = await TestApp.start({ CACHE_SYNC_INTERVAL_MS: '100' });
    upstream = await Upstream.start();
    projectId = (await app.ctx.newProject()).projectId;
  });

  afterAll(async () => {
    await upstream.close();
    await app.close();
  });

  beforeEach(() => upstream.reset());

  describe('pre-checks', () => {
    let scenario: Scenario;

    beforeAll(async () => {
      scenario = await noAuthScenario();
    });

    it('runs the function when every check passes', async () => {
      const res = await scenario.execute({ query: { q: 'cats' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: { ok: true }, error: null });
    });

    it('answers 404 for an unknown function', async () => {
      const res = await app.post('/v1/functions/NOPE__NOTHING/execute', { linked_account_owner_id: 'x' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Function NOPE__NOTHING not found' });
    });

    it('answers 404 for a private or inactive function, or a function of an inactive app', async () => {
      const hiddenApp = await app.ctx.newApp({ security_schemes: { no_auth: {} }, active: false });
      const inHiddenApp = await app.ctx.newFunction(hiddenApp.name, searchFunction());
      const privateFn = await app.ctx.newFunction(scenario.app.name, { ...searchFunction(), visibility: 'private' });
      const inactiveFn = await app.ctx.newFunction(scenario.app.name, { ...searchFunction(), active: false });
      for (const fn of [inHiddenApp, privateFn, inactiveFn]) {
        const res = await app.post(`/v1/functions/${fn.name}/execute`, { linked_account_owner_id: scenario.owner });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: `Function ${fn.name} not found` });
      }
      expect(upstream.received).toHaveLength(0);
    });

    it('answers 404 when the project has no configuration of the app, even if another project has one', async () => {
      const other = await app.ctx.newProject('other');
      const res = await scenario.execute({ query: { q: 'x' } }, { apiKey: other.apiKey });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: `App configuration for ${scenario.app.name} not found in this project` });
    });

    it('answers 403 when the configuration is disabled, before looking at the account', async () => {
      const s = await noAuthScenario({
        configuration: { enabled: false },
      });
      const res = await s.execute({ query: { q: 'x' } }, { owner: 'nobody' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: `App configuration for ${s.app.name} is disabled in this project` });
    });

    it('answers 403 for a function the configuration does not enable, and runs one it lists', async () => {
      const s = await noAuthScenario({
        configuration: { all_functions_enabled: false, enabled_functions: [] },
      });
      const denied = await s.execute({ query: { q: 'x' } });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        error: `Function ${s.fn.name} is not enabled in this project's configuration of app ${s.app.name}`,
      });
      const listed = await app.patch(`/v1/app-configurations/${s.app.name}`, { enabled_functions: [s.fn.name] });
      expect(listed.status, listed.text).toBe(200);
      const allowed = await s.execute({ query: { q: 'x' } });
      expect(allowed.status).toBe(200);
      expect(allowed.body.success).toBe(true);
    });

    it('answers 404 when the owner has no linked account of the app', async () => {
      const res = await scenario.execute({ query: { q: 'x' } }, { owner: 'someone-else' });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        error: `No linked account of app ${scenario.app.name} for owner someone-else in this project`,
      });
    });

    it('answers 403 when the linked account is disabled', async () => {
      const s = await noAuthScenario({
        account: { enabled: false },
      });
      const res = await s.execute({ query: { q: 'x' } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: `The linked account of app ${s.app.name} for owner ${s.owner} is disabled` });
    });

    it('answers 400 saying to re-link when the account was linked with another scheme', async () => {
      const s = await scenarioWith({
        scheme: 'api_key',
        settings: { location: 'header', name: 'X-Key' },
        function: searchFunction(),
      });
      await app.dataSource
        .getRepository(AppConfigurationEntity)
        .update({ id: s.configuration.id }, { security_scheme: 'no_auth' });
      const res = await s.execute({ query: { q: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(
        `The linked account of app ${s.app.name} for owner ${s.owner} was linked with security scheme api_key, ` +
          'but the app configuration now uses no_auth; re-link the account with no_auth',
      );
      expect(upstream.received).toHaveLength(0);
    });

    it('answers 400 listing every violation of the visible parameters, with its path', async () => {
      const s = await noAuthScenario({
        function: rest(
          'POST',
          '/items/{id}',
          node(
            {
              path: node({ id: { type: 'integer' } }, ['id']),
              query: node({ mode: { type: 'string', enum: ['fast', 'slow'] } }),
              body: node(
                {
                  title: { type: 'string', maxLength: 5 },
                  tags: { type: 'array', items: node({ name: { type: 'string' } }, ['name']) },
                  secret: { type: 'string', default: 'hidden' },
                },
                ['title', 'secret'],
                ['title', 'tags'],
              ),
            },
            ['path', 'body'],
          ),
        ),
      });
      const res = await s.execute({
        path: { id: 'seven' },
        query: { mode: 'medium' },
        body: { title: 'far too long', tags: [{ name: 'ok' }, { label: 'no name' }], secret: 'x' },
        extra: 1,
      });
      expect(res.status).toBe(400);
      const prefix = `Invalid function_input for ${s.fn.name}: `;
      expect(res.body.error.startsWith(prefix)).toBe(true);
      expect(res.body.error.slice(prefix.length).split('; ').sort()).toEqual(
        [
          'function_input.extra: is not an accepted parameter',
          'function_input.path.id: must be integer',
          'function_input.query.mode: must be one of "fast", "slow"',
          'function_input.body.title: must NOT have more than 5 characters',
          'function_input.body.tags[1].name: is required',
          'function_input.body.tags[1].label: is not an accepted parameter',
          'function_input.body.secret: is not an accepted parameter',
        ].sort(),
      );
      expect(upstream.received).toHaveLength(0);
    });

    it('answers 400 for a missing required visible parameter when function_input is absent', async () => {
      const res = await app.post(`/v1/functions/${scenario.fn.name}/execute`, {
        linked_account_owner_id: scenario.owner,
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: `Invalid function_input for ${scenario.fn.name}: function_input.query: is required`,
      });
    });

    it('answers 422 for an owner id over 255 characters, a missing owner, a non-object input or no body', async () => {
      const url = `/v1/functions/${scenario.fn.name}/execute`;
      const long = await app.post(url, { linked_account_owner_id: 'x'.repeat(256) });
      expect(long.status).toBe(422);
      expect(long.body.detail).toEqual([
        {
          loc: ['body', 'linked_account_owner_id'],
          msg: 'String should have at most 255 characters',
          type: 'string_too_long',
        },
      ]);
      const missing = await app.post(url, { function_input: {} });
      expect(missing.status).toBe(422);
      expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'linked_account_owner_id'], type: 'missing' });
      const notObject = await app.post(url, { function_input: [1], linked_account_owner_id: scenario.owner });
      expect(notObject.status).toBe(422);
      expect(notObject.body.detail[0]).toMatchObject({ loc: ['body', 'function_input'], type: 'dict_type' });
      const noBody = await app.request('POST', url);
      expect(noBody.status).toBe(422);
      expect(noBody.body.detail).toEqual([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    });

    it('answers 401 without an API key', async () => {
      const noKey = await app.post(
        `/v1/functions/${scenario.fn.name}/execute`,
        { linked_account_owner_id: scenario.owner },
        { apiKey: null },
      );
      expect(noKey.status).toBe(401);
    });
  });

  describe('credentials of every scheme, exactly where the app expects them', () => {
    const post = () => rest('POST', '/things', node({ body: node({ name: { type: 'string' } }, ['name']) }, ['body']));

    it('no_auth sends the request as described, with nothing added', async () => {
      const s = await noAuthScenario();
      await s.execute({ query: { q: 'cats' } });
      expect(upstream.last.method).toBe('GET');
      expect(upstream.last.url).toBe('/api/search?q=cats');
      expect(upstream.last.headers.authorization).toBeUndefined();
      expect(upstream.last.headers.cookie).toBeUndefined();
      expect(upstream.last.headers['user-agent']).toBe('patchbay');
      expect(upstream.last.body).toBe('');
    });

    it.each<[string, { location: string; name: string; prefix?: string | null }]>([
      ['header with a prefix', { location: 'header', name: 'Authorization', prefix: 'Bearer' }],
      ['header without a prefix', { location: 'header', name: 'X-Api-Key' }],
      ['header with a null prefix', { location: 'header', name: 'X-Api-Key', prefix: null }],
      ['query', { location: 'query', name: 'api_key' }],
      ['query with a prefix', { location: 'query', name: 'key', prefix: 'Token' }],
      ['cookie', { location: 'cookie', name: 'session_key' }],
      ['body', { location: 'body', name: 'apiKey' }],
    ])('api_key in the %s', async (_label, settings) => {
      const s = await scenarioWith({
        scheme: 'api_key',
        settings,
        function: post(),
        credentials: { api_key: 'k3y/with space' },
      });
      const res = await s.execute({ body: { name: 'n' } });
      expect(res.body).toEqual({ success: true, data: { ok: true }, error: null });
      const received = upstream.last;
      const expected = settings.prefix ? `${settings.prefix} k3y/with space` : 'k3y/with space';
      switch (settings.location) {
        case 'header':
          expect(received.headers[settings.name.toLowerCase()]).toBe(expected);
          expect(received.url).toBe('/api/things');
          expect(JSON.parse(received.body)).toEqual({ name: 'n' });
          break;
        case 'query':
          expect(received.url).toBe(`/api/things?${settings.name}=${encodeURIComponent(expected)}`);
          break;
        case 'cookie':
          expect(received.headers.cookie).toBe(`${settings.name}=${encodeURIComponent(expected)}`);
          break;
        case 'body':
          expect(JSON.parse(received.body)).toEqual({ name: 'n', [settings.name]: expected });
          expect(received.headers['content-type']).toBe('application/json');
          break;
      }
    });

    it('api_key falls back to the app default when the account has no key of its own', async () => {
      const s = await scenarioWith({
        scheme: 'api_key',
        settings: { location: 'header', name: 'X-Key' },
        appSecrets: { default_security_credentials_by_scheme: { api_key: { secret_key: 'app-default-key' } } },
        function: searchFunction(),
        credentials: {},
      });
      await s.execute({ query: { q: 'x' } });
      expect(upstream.last.headers['x-key']).toBe('app-default-key');
    });

    it("api_key prefers the account's own key over the app default", async () => {
      const s = await scenarioWith({
        scheme: 'api_key',
        settings: { location: 'header', name: 'X-Key' },
        appSecrets: { default_security_credentials_by_scheme: { api_key: { secret_key: 'app-default-key' } } },
        function: searchFunction(),
        credentials: { api_key: 'own-key' },
      });
      await s.execute({ query: { q: 'x' } });
      expect(upstream.last.headers['x-key']).toBe('own-key');
    });

    it('api_key without any key answers success:false and sends nothing', async () => {
      const s = await scenarioWith({
        scheme: 'api_key',
        settings: { location: 'header', name: 'X-Key' },
        function: searchFunction(),
        credentials: {},
      });
      const res = await s.execute({ query: { q: 'x' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: false,
        data: null,
        error: `No API key to send: the linked account has none and app ${s.app.name} has no default API key`,
      });
      expect(upstream.received).toHaveLength(0);
    });

    it('http_basic sends Authorization: Basic base64(username:password)', async () => {
      const s = await scenarioWith({
        scheme: 'http_basic',
        function: searchFunction(),
        credentials: { username: 'ada', password: 'p@ss:wörd' },
      });
      await s.execute({ query: { q: 'x' } });
      expect(upstream.last.headers.authorization).toBe(
        `Basic ${Buffer.from('ada:p@ss:wörd', 'utf8').toString('base64')}`,
      );
    });

    it('http_basic falls back to the app default user', async () => {
      const s = await scenarioWith({
        scheme: 'http_basic',
        appSecrets: { default_security_credentials_by_scheme: { http_basic: { username: 'svc', password: 'pw' } } },
        function: searchFunction(),
        credentials: {},
      });
      await s.execute({ query: { q: 'x' } });
      expect(upstream.last.headers.authorization).toBe(`Basic ${Buffer.from('svc:pw').toString('base64')}`);
    });

    it('http_bearer sends Authorization: Bearer, falling back to the app default token', async () => {
      const own = await scenarioWith({
        scheme: 'http_bearer',
        function: searchFunction(),
        credentials: { token: 'tok-123' },
      });
      await own.execute({ query: { q: 'x' } });
      expect(upstream.last.headers.authorization).toBe('Bearer tok-123');
      const fallback = await scenarioWith({
        scheme: 'http_bearer',
        appSecrets: { default_security_credentials_by_scheme: { http_bearer: { token: 'app-token' } } },
        function: searchFunction(),
        credentials: {},
      });
      await fallback.execute({ query: { q: 'x' } });
      expect(upstream.last.headers.authorization).toBe('Bearer app-token');
    });

    it.each([
      ['header', { location: 'header', name: 'Authorization', prefix: 'Bearer' }],
      ['query', { location: 'query', name: 'access_token', prefix: '' }],
    ])('oauth2 sends a valid access token in the %s with its prefix, without refreshing', async (_label, where) => {
      const s = await scenarioWith({
        scheme: 'oauth2',
        settings: {
          ...where,
          client_id: 'client',
          scope: 'read',
          authorize_url: `${upstream.url}/authorize`,
          access_token_url: `${upstream.url}/token`,
          refresh_token_url: `${upstream.url}/token`,
        },
        function: searchFunction(),
        credentials: { access_token: 'at-1', refresh_token: 'rt-1', expires_at: Math.floor(Date.now() / 1000) + 3600 },
      });
      const res = await s.execute({ query: { q: 'x' } });
      expect(res.body.success).toBe(true);
      expect(upstream.received).toHaveLength(1);
      if (where.location === 'header') {
        expect(upstream.last.headers.authorization).toBe('Bearer at-1');
      } else {
        expect(upstream.last.url).toBe('/api/search?q=x&access_token=at-1');
      }
    });
  });

  describe('building the request', () => {
    it('percent-encodes path parameters so that a value never changes the path', async () => {
      const s = await noAuthScenario({
        function: rest(
          'GET',
          '/repos/{owner}/{repo}/files/{name}',
          node(
            {
              path: node({ owner: { type: 'string' }, repo: { type: 'string' }, name: { type: 'string' } }, [
                'owner',
                'repo',
                'name',
              ]),
            },
            ['path'],
          ),
        ),
      });
      await s.execute({ path: { owner: '..', repo: 'a/b?c=d#e', name: 'x y%2F.' } });
      expect(upstream.last.url).toBe('/api/repos/%2E%2E/a%2Fb%3Fc%3Dd%23e/files/x%20y%252F.');
      await s.execute({ path: { owner: '.', repo: '@evil.example.com', name: 'ünï' } });
      expect(upstream.last.url).toBe('/api/repos/%2E/%40evil.example.com/files/%C3%BCn%C3%AF');
    });

    it('sends query, header and cookie sections: arrays as repeated keys, scalars as text', async () => {
      const s = await noAuthScenario({
        function: rest(
          'GET',
          '/list',
          node({
            query: node({
              tag: { type: 'array', items: { type: 'string' } },
              limit: { type: 'integer' },
              all: { type: 'boolean' },
              text: { type: 'string' },
            }),
            header: node({ 'X-Trace': { type: 'string' } }),
            cookie: node({ theme: { type: 'string' }, lang: { type: 'string' } }),
          }),
        ),
      });
      await s.execute({
        query: { tag: ['a', 'b c'], limit: 5, all: false, text: 'x&y=z' },
        header: { 'X-Trace': 'abc' },
        cookie: { theme: 'dark mode', lang: 'fr' },
      });
      expect(upstream.last.url).toBe('/api/list?tag=a&tag=b%20c&limit=5&all=false&text=x%26y%3Dz');
      expect(upstream.last.headers['x-trace']).toBe('abc');
      expect(upstream.last.headers.cookie).toBe('theme=dark%20mode; lang=fr');
    });

    it('sends the body as JSON by default', async () => {
      const s = await noAuthScenario({
        function: rest(
          'PATCH',
          '/items/{id}',
          node(
            {
              path: node({ id: { type: 'integer' } }, ['id']),
              body: node({
                title: { type: 'string' },
                meta: { type: 'object', additionalProperties: true },
                n: { type: 'number' },
              }),
            },
            ['path'],
          ),
        ),
      });
      await s.execute({ path: { id: 7 }, body: { title: 'Hi', meta: { a: [1, 2] }, n: 1.5 } });
      expect(upstream.last.method).toBe('PATCH');
      expect(upstream.last.url).toBe('/api/items/7');
      expect(upstream.last.headers['content-type']).toBe('application/json');
      expect(upstream.last.body).toBe('{"title":"Hi","meta":{"a":[1,2]},"n":1.5}');
    });

    it('form-encodes the body when the function’s invisible Content-Type header says so', async () => {
      const s = await scenarioWith({
        scheme: 'api_key',
        settings: { location: 'header', name: 'Authorization', prefix: 'Bearer' },
        credentials: { api_key: 'sk_test' },
        function: rest(
          'POST',
          '/v1/coupons',
          node(
            {
              header: node(
                { 'Content-Type': { type: 'string', default: 'application/x-www-form-urlencoded' } },
                ['Content-Type'],
                [],
              ),
              body: node({
                duration: { type: 'string' },
                percent_off: { type: 'number' },
                metadata: { type: 'object', additionalProperties: true },
                expand: { type: 'array', items: { type: 'string' } },
                note: { type: 'string' },
              }),
            },
            ['header', 'body'],
            ['body'],
          ),
        ),
      });
      const res = await s.execute({
        body: {
          duration: 'once',
          percent_off: 12.5,
          metadata: { plan: 'pro', 'a b': 'c&d' },
          expand: ['x', 'y'],
          note: 'hello world',
        },
      });
      expect(res.body.success).toBe(true);
      expect(upstream.last.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(upstream.last.headers.authorization).toBe('Bearer sk_test');
      expect(upstream.last.body).toBe(
        'duration=once&percent_off=12.5&metadata%5Bplan%5D=pro&metadata%5Ba+b%5D=c%26d&expand=x&expand=y&note=hello+world',
      );
    });

    it("form-encodes the body when protocol_data's content_type says so, api_key in the body included", async () => {
      const s = await scenarioWith({
        scheme: 'api_key',
        settings: { location: 'body', name: 'token' },
        credentials: { api_key: 't0k' },
        function: rest(
          'POST',
          '/messages',
          node({ body: node({ To: { type: 'string' }, Body: { type: 'string' } }, ['To']) }, ['body']),
          { content_type: 'application/x-www-form-urlencoded' },
        ),
      });
      await s.execute({ body: { To: '+331234', Body: 'Salut à toi' } });
      expect(upstream.last.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(upstream.last.body).toBe('To=%2B331234&Body=Salut+%C3%A0+toi&token=t0k');
    });

    it('fills required invisible parameters from their defaults at every depth, and drops nulls', async () => {
      const s = await noAuthScenario({
        function: rest(
          'POST',
          '/v{version}/send',
          node(
            {
              path: node({ version: { type: 'integer', default: 2 } }, ['version'], []),
              query: node(
                { fields: { type: 'string', default: 'all' }, optional_hidden: { type: 'string', default: 'no' } },
                ['fields'],
                [],
              ),
              header: node({ Accept: { type: 'string', default: 'application/vnd.test+json' } }, ['Accept'], []),
              body: node(
                {
                  text: { type: 'string' },
                  note: { type: ['string', 'null'] },
                  options: node(
                    { priority: { type: 'string', default: 'high' }, channel: { type: 'string' } },
                    ['priority'],
                    ['channel'],
                  ),
                  envelope: node({ kind: { type: 'string', default: 'mail' } }, ['kind'], []),
                },
                ['text', 'options', 'envelope'],
                ['text', 'note', 'options'],
              ),
            },
            ['path', 'query', 'header', 'body'],
            ['body'],
          ),
        ),
      });
      const res = await s.execute({ body: { text: 'hi', note: null, options: { channel: 'ops' } } });
      expect(res.body.success).toBe(true);
      expect(upstream.last.url).toBe('/api/v2/send?fields=all');
      expect(upstream.last.headers.accept).toBe('application/vnd.test+json');
      expect(JSON.parse(upstream.last.body)).toEqual({
        text: 'hi',
        options: { channel: 'ops', priority: 'high' },
        envelope: { kind: 'mail' },
      });
    });

    it('sends the catalogue’s fixed headers and joins server_url and path', async () => {
      const s = await noAuthScenario({
        function: rest('GET', 'status', node({}), { headers: { 'X-Api-Version': '2024-01-01' } }),
      });
      const res = await s.execute();
      expect(res.body.success).toBe(true);
      expect(upstream.last.url).toBe('/api/status');
      expect(upstream.last.headers['x-api-version']).toBe('2024-01-01');
    });
  });

  describe('hot-path cache', () => {
    // Writes through the services are seen at once (execution-cache.db.e2e-spec.ts); these rows are written by
    // hand, past the services, so only the change counters tell the cache: within CACHE_SYNC_INTERVAL_MS (100 ms).
    it('sees configuration, account and catalogue rows written by hand within CACHE_SYNC_INTERVAL_MS', async () => {
      const s = await noAuthScenario();
      const status = async () => (await s.execute({ query: { q: 'x' } })).status;
      expect(await status()).toBe(200);

      const configurations = app.dataSource.getRepository(AppConfigurationEntity);
      await configurations.update({ id: s.configuration.id }, { enabled: false });
      await expect.poll(status, { timeout: 5000 }).toBe(403);
      await configurations.update({ id: s.configuration.id }, { enabled: true });
      await expect.poll(status, { timeout: 5000 }).toBe(200);

      const accounts = app.dataSource.getRepository(LinkedAccountEntity);
      await accounts.update({ id: s.account.id }, { enabled: false });
      await expect.poll(status, { timeout: 5000 }).toBe(403);
      await accounts.delete({ id: s.account.id });
      await expect.poll(status, { timeout: 5000 }).toBe(404);
      // An absent row is never kept: an insert is seen at once.
      await insertAccount(app, projectId, s.app.name, 'no_auth', {}, { linked_account_owner_id: s.owner });
      expect(await status()).toBe(200);

      const moved = await Upstream.start();
      try {
        await app.dataSource.query(`UPDATE functions SET protocol_data = $2 WHERE name = $1`, [
          s.fn.name,
          { method: 'GET', path: '/moved', server_url: moved.url },
        ]);
        await expect
          .poll(
            async () => {
              await s.execute({ query: { q: 'x' } });
              return moved.received.at(-1)?.url;
            },
            { timeout: 5000 },
          )
          .toBe('/moved?q=x');
      } finally {
        await moved.close();
      }
      await app.dataSource.query(`DELETE FROM app_configurations WHERE id = $1`, [s.configuration.id]);
      await expect.poll(status, { timeout: 5000 }).toBe(404);
    });

    it('sees a change written by another instance (another connection) within CACHE_SYNC_INTERVAL_MS', async () => {
      const s = await noAuthScenario();
      expect((await s.execute({ query: { q: 'x' } })).status).toBe(200);
      const { Client } = await import('pg');
      const options = app.dataSource.options as { url?: string; host?: string; port?: number };
      const client = new Client(
        options.url
          ? { connectionString: options.url }
          : { host: options.host, port: options.port, user: 'postgres', password: 'postgres', database: 'postgres' },
      );
      await client.connect();
      try {
        await client.query('UPDATE linked_accounts SET enabled = false WHERE id = $1', [s.account.id]);
      } finally {
        await client.end();
      }
      await expect.poll(async () => (await s.execute({ query: { q: 'x' } })).status, { timeout: 3000 }).toBe(403);
    });

    it('recompiles the input schema when the function’s content hash changes', async () => {
      const s = await noAuthScenario();
      expect((await s.execute({ query: { q: 'x' } })).status).toBe(200);
      const strict = node({ query: node({ q: { type: 'string', minLength: 3 } }, ['q']) }, ['query']);
      await app.dataSource
        .getRepository(FunctionEntity)
        .update({ name: s.fn.name }, { parameters: strict, content_hash: 'changed' });
      await expect.poll(async () => (await s.execute({ query: { q: 'x' } })).status, { timeout: 5000 }).toBe(400);
      const res = await s.execute({ query: { q: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('function_input.query.q: must NOT have fewer than 3 characters');
    });
  });

  it('isolates projects: another project’s account of the same owner id is not used', async () => {
    const s = await noAuthScenario();
    const other = await app.ctx.newProject('isolated');
    await insertConfiguration(app, other.projectId, s.app.name, { security_scheme: 'no_auth' });
    const res = await s.execute({ query: { q: 'x' } }, { apiKey: other.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe(`No linked account of app ${s.app.name} for owner ${s.owner} in this project`);
  });
});
