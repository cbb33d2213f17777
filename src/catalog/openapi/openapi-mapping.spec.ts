import { describe, expect, it } from 'vitest';
import { checkAppRecords } from '../catalog-files.js';
import { ProviderRules } from '../../functions/provider-rules.js';
import { mapOpenApiDocument, OpenApiRefusal, type OpenApiMapping } from './openapi-mapping.js';
import { MAX_FUNCTION_NAME } from './openapi-names.js';
import { loadOpenApiDocument } from './openapi-source.js';
import { openApiSchemaCompilations } from './openapi-validators.js';

const FIXTURES = 'test/fixtures/openapi';

async function mapFile(file: string, options = {}): Promise<OpenApiMapping> {
  const { document } = await loadOpenApiDocument(`${FIXTURES}/${file}`);
  return mapOpenApiDocument(document, options);
}

const byName = (mapping: OpenApiMapping, suffix: string) => {
  const fn = mapping.functions.find((f) => f.name.endsWith(`__${suffix}`));
  if (!fn) {
    throw new Error(`no function ${suffix} in ${mapping.functions.map((f) => f.name).join(', ')}`);
  }
  return fn;
};

/** What the providers accept (src/functions/provider-rules.ts), with names short enough for MCP clients' prefix. */
function expectProviderSafe(mapping: OpenApiMapping): void {
  const rules = new ProviderRules(MAX_FUNCTION_NAME);
  for (const fn of mapping.functions) {
    expect(rules.violations(fn), fn.name).toEqual([]);
  }
  const checked = checkAppRecords(
    mapping.app,
    mapping.functions,
    { folder: 'x', appFile: 'app', functionsFile: 'fns' },
    {},
  );
  expect(checked.problems).toEqual([]);
}

describe('OpenAPI 3.0 (YAML) to catalogue records', () => {
  it('maps the app: name, title, description without markup, logo, server with variable defaults, api key', async () => {
    const { app } = await mapFile('petstore-3.0.yaml');
    expect(app).toMatchObject({
      name: 'PET_STORE',
      display_name: 'Pet Store',
      version: '1.2.0',
      description: 'A small pet shop. See the docs.',
      logo: 'https://example.com/logo.png',
      categories: ['pets'],
      security_schemes: { api_key: { location: 'header', name: 'X-Pet-Key' }, no_auth: {} },
    });
  });

  it('places parameters in path/query/header/cookie with visible lists; a one-value required parameter is hidden with its default', async () => {
    const mapping = await mapFile('petstore-3.0.yaml');
    const fn = byName(mapping, 'SHOW_PET_BY_ID');
    expect(fn.protocol_data).toEqual({
      method: 'GET',
      path: '/pets/{petId}',
      server_url: 'https://eu.pets.example.com/v1',
      // The server's template, so that an app configuration can choose another region.
      openapi: {
        v: 1,
        server: { url: 'https://{region}.pets.example.com/v1', variables: { region: { default: 'eu' } } },
      },
    });
    const p = fn.parameters as Record<string, any>;
    expect(p.required).toEqual(['path', 'query']);
    expect(p.properties.path).toMatchObject({ required: ['petId'], visible: ['petId'] });
    expect(p.properties.query.properties['api-version']).toEqual({
      type: 'string',
      enum: ['2024-01-01'],
      default: '2024-01-01',
    });
    expect(p.properties.query.visible).toEqual(['verbose']);
    expect(p.properties.header.visible).toEqual(['X-Trace']);
    expect(p.properties.cookie.visible).toEqual(['session']);
    expect(fn.description).toBe('Info for a specific pet');
    expect(fn.tags).toEqual(['pets']);
  });

  it('merges allOf, leaves readOnly out, turns nullable into a type list', async () => {
    const body = (byName(await mapFile('petstore-3.0.yaml'), 'CREATE_PET').parameters as Record<string, any>).properties
      .body;
    expect(Object.keys(body.properties).sort()).toEqual(['name', 'owner', 'tag']);
    expect(body.required).toEqual(['name']);
    expect(body.properties.tag.type).toEqual(['string', 'null']);
  });

  it('cuts a recursive schema at a fixed depth', async () => {
    const body = (byName(await mapFile('petstore-3.0.yaml'), 'CREATE_TREE').parameters as Record<string, any>)
      .properties.body;
    expect(body.properties.label).toEqual({ type: 'string' });
    // The schema met again inside itself ends there, as an open object.
    expect(body.properties.children.items).toMatchObject({
      type: 'object',
      properties: {},
      additionalProperties: true,
    });
  });

  it('form bodies carry their media type; binary bodies are base64 text; deprecated operations are skipped with reasons', async () => {
    const mapping = await mapFile('petstore-3.0.yaml');
    expect(byName(mapping, 'LOGIN').protocol_data).toMatchObject({
      openapi: { v: 1, body: { media_type: 'application/x-www-form-urlencoded' } },
    });
    const upload = mapping.functions.find((f) => (f.protocol_data as { path: string }).path === '/upload');
    expect(upload?.protocol_data).toMatchObject({ openapi: { body: { media_type: 'application/octet-stream' } } });
    expect((upload?.parameters as Record<string, any>).properties.body).toMatchObject({ type: 'string' });
    expect(mapping.skipped).toEqual([
      { operation: 'GET /old', reason: 'deprecated (import it with --include-deprecated)' },
    ]);
    const withDeprecated = await mapFile('petstore-3.0.yaml', { includeDeprecated: true });
    expect(withDeprecated.functions.map((f) => f.name)).toContain('PET_STORE__OLD_THING');
  });

  it('fits long or illegal operationIds into 48 characters, deterministically, and keeps a previous name', async () => {
    const first = await mapFile('petstore-3.0.yaml');
    const long = first.functions.find((f) => (f.protocol_data as { path: string }).path === '/a/very/long/path/{id}');
    expect(long?.name.length).toBeLessThanOrEqual(48);
    expect(long?.name).toMatch(/^PET_STORE__COM_EXMPL_SRVC_THIS_OPRTN_IDNT_[0-9A-F]{6}$/);
    expect(JSON.stringify(await mapFile('petstore-3.0.yaml'))).toBe(JSON.stringify(first));
    const renamed = await mapFile('petstore-3.0.yaml', {
      previousNames: new Map([['GET /pets/{petId}', 'PET_STORE__GET_PET']]),
    });
    expect(renamed.functions.map((f) => f.name)).toContain('PET_STORE__GET_PET');
    expectProviderSafe(first);
  });

  it('--include / --exclude / --max-functions / --server / --app-name', async () => {
    const mapping = await mapFile('petstore-3.0.yaml', {
      include: ['/pets*', '/pets/**'],
      exclude: ['createPet'],
      server: 'http://127.0.0.1:9999/base',
      appName: 'my pets',
    });
    expect(mapping.functions.map((f) => f.name)).toEqual(['MY_PETS__SHOW_PET_BY_ID']);
    expect(mapping.functions[0].protocol_data).toMatchObject({ server_url: 'http://127.0.0.1:9999/base' });
    const capped = await mapFile('petstore-3.0.yaml', { maxFunctions: 2 });
    expect(capped.functions).toHaveLength(2);
    expect(capped.skipped.some((s) => s.reason === 'over --max-functions 2')).toBe(true);
  });
});

describe('OpenAPI 3.1, Swagger 2.0, relative files and refusals', () => {
  it('3.1: oauth2 authorization code with the union of scopes and placeholders, http basic, per-operation security, anyOf', async () => {
    const mapping = await mapFile('notes-3.1.json');
    expect(mapping.app.security_schemes).toEqual({
      oauth2: {
        location: 'header',
        name: 'Authorization',
        prefix: 'Bearer',
        client_id: '{{ NOTES_CLIENT_ID }}',
        client_secret: '{{ NOTES_CLIENT_SECRET }}',
        scope: 'notes:read notes:write',
        authorize_url: 'https://auth.example.com/authorize',
        access_token_url: 'https://auth.example.com/token',
        refresh_token_url: 'https://auth.example.com/token',
      },
      http_basic: {},
    });
    const create = (byName(mapping, 'CREATE_NOTE').parameters as Record<string, any>).properties.body;
    expect(create.properties.kind).toEqual({ oneOf: [{ type: 'string' }, { type: 'integer' }] });
    const list = (byName(mapping, 'LIST_NOTES').parameters as Record<string, any>).properties.query;
    expect(list.properties.limit).toEqual({ type: ['integer', 'null'], default: 10 });
    expectProviderSafe(mapping);
  });

  it('Swagger 2.0 is converted: scheme + host + basePath, body parameter, api key in query', async () => {
    const mapping = await mapFile('todo-swagger-2.0.json');
    expect(mapping.app.security_schemes).toEqual({ api_key: { location: 'query', name: 'token' } });
    const fn = byName(mapping, 'UPDATE_TODO');
    expect(fn.protocol_data).toEqual({
      method: 'PUT',
      path: '/todos/{id}',
      server_url: 'https://todo.example.com/api',
      openapi: { v: 1, body: { media_type: 'application/json' } },
    });
    const body = (fn.parameters as Record<string, any>).properties.body;
    expect(Object.keys(body.properties)).toEqual(['title', 'done']);
    expectProviderSafe(mapping);
  });

  it('resolves references to files beside the document', async () => {
    const mapping = await mapFile('split/main.yaml', { server: 'https://split.example.com' });
    const body = (byName(mapping, 'ADD_ITEM').parameters as Record<string, any>).properties.body;
    expect(body.properties).toEqual({ sku: { type: 'string' } });
  });

  it('refuses a document without a server, naming --server', async () => {
    await expect(mapFile('no-server.json')).rejects.toThrow(/names no server URL: give one with --server/);
    await expect(mapFile('no-server.json')).rejects.toBeInstanceOf(OpenApiRefusal);
  });

  it('refuses an invalid document with the validator message, and never fetches a remote reference', async () => {
    await expect(loadOpenApiDocument(`${FIXTURES}/invalid.json`)).rejects.toThrow(/is not valid OpenAPI/);
    await expect(loadOpenApiDocument(`${FIXTURES}/remote-ref.json`)).rejects.toThrow(
      /references http:\/\/127\.0\.0\.1:9\/schema\.json: remote references are not fetched/,
    );
  });

  it('validates every document against one compiled OpenAPI schema per specification version', async () => {
    const files = ['petstore-3.0.yaml', 'notes-3.1.json', 'todo-swagger-2.0.json'];
    for (const file of files) {
      await loadOpenApiDocument(`${FIXTURES}/${file}`);
    }
    // Swagger 2.0, OpenAPI 3.0 and OpenAPI 3.1 each have their schema: three compilations in all.
    expect(openApiSchemaCompilations()).toBe(3);
    for (const file of files) {
      await loadOpenApiDocument(`${FIXTURES}/${file}`);
    }
    // The library's own error message, produced with the shared compiled schema.
    await expect(loadOpenApiDocument(`${FIXTURES}/invalid.json`)).rejects.toThrow(
      /is not valid OpenAPI: OpenAPI schema validation failed\.[\s\S]*required property 'version'[\s\S]*type must be object/,
    );
    expect(openApiSchemaCompilations()).toBe(3);
  });
});

describe('server URL when the first servers entry is not absolute', () => {
  const doc = (servers: unknown, origin?: unknown) => ({
    openapi: '3.0.3',
    info: { title: 'Far', version: '1', ...(origin === undefined ? {} : { 'x-origin': origin }) },
    ...(servers === undefined ? {} : { servers }),
    paths: { '/items': { get: { operationId: 'listItems', responses: { 200: { description: 'ok' } } } } },
  });
  const origin = [{ format: 'openapi', url: 'https://specs.example.com/far/openapi.json', version: '3.0' }];
  const serverOf = (mapping: OpenApiMapping) => mapping.functions[0].protocol_data.server_url;

  it('no servers: "/" resolved against the x-origin URL, with a note', () => {
    const mapping = mapOpenApiDocument(doc(undefined, origin));
    expect(serverOf(mapping)).toBe('https://specs.example.com');
    expect(mapping.notes).toEqual([
      'server "https://specs.example.com/": the missing server URL ("/") resolved against the document\'s origin https://specs.example.com/far/openapi.json',
    ]);
  });

  it('a relative server URL is resolved against the x-origin URL (absolute path or relative to the folder)', () => {
    expect(serverOf(mapOpenApiDocument(doc([{ url: '/api/v2' }], origin)))).toBe('https://specs.example.com/api/v2');
    const beside = mapOpenApiDocument(doc([{ url: 'v2' }], origin));
    expect(serverOf(beside)).toBe('https://specs.example.com/far/v2');
    expect(beside.notes[0]).toMatch(/relative server URL "v2" resolved against the document's origin/);
  });

  it('an absolute entry listed after a relative first one is preferred to the origin, with a note', () => {
    const mapping = mapOpenApiDocument(
      doc([{ url: '/' }, { url: 'https://api.example.com/{v}', variables: { v: { default: 'v1' } } }], origin),
    );
    expect(serverOf(mapping)).toBe('https://api.example.com/v1');
    expect(mapping.notes).toEqual(['server "https://api.example.com/v1" used: the first server URL "/" is relative']);
  });

  it('--server wins; without a usable origin the document is still refused naming --server', () => {
    expect(serverOf(mapOpenApiDocument(doc([{ url: '/' }], origin), { server: 'http://127.0.0.1:1/x' }))).toBe(
      'http://127.0.0.1:1/x',
    );
    expect(() => mapOpenApiDocument(doc([{ url: '/v1' }]))).toThrow(
      'the server URL "/v1" is not an absolute http(s) URL: give one with --server',
    );
    expect(() => mapOpenApiDocument(doc(undefined, [{ url: 'file:///specs/far.json' }]))).toThrow(
      'the document names no server URL: give one with --server',
    );
    // A variable without a default cannot be resolved anywhere.
    expect(() => mapOpenApiDocument(doc([{ url: '/{tenant}/api' }], origin))).toThrow(
      /"\/\{tenant\}\/api" is not an absolute/,
    );
  });
});

describe('per-path and per-operation servers', () => {
  const ok = { 200: { description: 'ok' } };
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Regions', version: '1' },
    servers: [{ url: 'https://api.example.com/v1' }],
    paths: {
      '/plain': { get: { operationId: 'plain', responses: ok } },
      '/regional': {
        servers: [{ url: 'https://{region}.example.com/api', variables: { region: { default: 'eu' } } }],
        get: { operationId: 'regional', responses: ok },
        put: { operationId: 'regionalOwn', servers: [{ url: 'https://uploads.example.com' }], responses: ok },
      },
      '/relative': { get: { operationId: 'relative', servers: [{ url: '/v2' }], responses: ok } },
      '/unresolved': {
        get: { operationId: 'unresolved', servers: [{ url: 'https://{tenant}.example.com' }], responses: ok },
      },
    },
  };
  const serverOf = (mapping: OpenApiMapping, suffix: string) => byName(mapping, suffix).protocol_data.server_url;

  it("an operation's servers override its path's, which override the document's; variables take their defaults", () => {
    const mapping = mapOpenApiDocument(doc);
    expect(serverOf(mapping, 'PLAIN')).toBe('https://api.example.com/v1');
    expect(serverOf(mapping, 'REGIONAL')).toBe('https://eu.example.com/api');
    expect(serverOf(mapping, 'REGIONAL_OWN')).toBe('https://uploads.example.com');
    // A relative one is resolved against the document's server; one with a variable without a default is not used.
    expect(serverOf(mapping, 'RELATIVE')).toBe('https://api.example.com/v2');
    expect(serverOf(mapping, 'UNRESOLVED')).toBe('https://api.example.com/v1');
  });

  it('--server replaces every server the document declares', () => {
    const mapping = mapOpenApiDocument(doc, { server: 'http://127.0.0.1:1/x' });
    for (const suffix of ['PLAIN', 'REGIONAL', 'REGIONAL_OWN', 'RELATIVE']) {
      expect(serverOf(mapping, suffix)).toBe('http://127.0.0.1:1/x');
    }
  });
});

describe('an operation without parameters', () => {
  it('gets an empty object schema, which the providers accept (they refuse `{}`)', () => {
    const mapping = mapOpenApiDocument({
      openapi: '3.0.3',
      info: { title: 'Heartbeat', version: '1' },
      servers: [{ url: 'https://status.example.com' }],
      paths: { '/ping': { get: { operationId: 'ping', responses: { '200': { description: 'ok' } } } } },
    });
    expect(mapping.functions[0].parameters).toEqual({
      type: 'object',
      properties: {},
      required: [],
      visible: [],
      additionalProperties: false,
    });
    expectProviderSafe(mapping);
  });
});
