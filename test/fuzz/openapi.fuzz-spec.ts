import { request as httpRequest } from 'node:http';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../helpers/test-app.js';
import { Upstream } from '../e2e/execution/upstream.js';
import { document, type Operation, operations } from '../e2e/hostile-input/operations.js';
import { hostileText, hostileValue, SchemaArbitraries } from './schema-arbitrary.js';

// ajv-formats is CommonJS: imported from ESM, the plugin is the module's `default` member.
const addFormats = addFormatsModule.default;

/** Fixed, so that a failure replays; FUZZ_SEED and FUZZ_RUNS change the budget for a local hunt. */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 200);

type Auth = 'valid' | 'none' | 'unknown' | 'other-project';

interface FuzzRequest {
  auth: Auth;
  path: string;
  /** The path holds a malformed percent-encoding on purpose. */
  malformedPath: boolean;
  query: [string, string][];
  body?: unknown;
}

interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const schemas = document.components.schemas as Record<string, Record<string, unknown>>;
const arbitraries = new SchemaArbitraries(schemas);
const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
addFormats(ajv);
ajv.addSchema(document, 'doc');

/** The documented schema of each (operation, status), compiled once; undefined when the answer has no body. */
const validators = new Map<string, ValidateFunction | undefined>();
function responseValidator(operation: Operation, status: number): ValidateFunction | undefined {
  const key = `${operation.operationId} ${status}`;
  if (!validators.has(key)) {
    const response = operation.responses[String(status)] as { content?: Record<string, { schema: unknown }> };
    const schema = response?.content?.['application/json']?.schema;
    validators.set(
      key,
      schema === undefined
        ? undefined
        : ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as object),
    );
  }
  return validators.get(key);
}

function send(app: TestApp, method: string, request: FuzzRequest, keys: Record<Auth, string | undefined>) {
  const url = new URL(app.url);
  const search = new URLSearchParams(request.query).toString();
  const headers: Record<string, string> = {};
  const key = keys[request.auth];
  if (key) {
    headers['x-api-key'] = key;
  }
  let body: string | undefined;
  if (request.body !== undefined) {
    body = JSON.stringify(request.body);
    headers['content-type'] = 'application/json';
  }
  return new Promise<FuzzResponse>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: search ? `${request.path}?${search}` : request.path,
        headers,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Property-based fuzzing of the running service from its committed OpenAPI document: for every
 * operation, valid and hostile path, query and body input with valid, missing, unknown and
 * other-project keys. Fails on any 5xx, any status the operation does not document, any body that
 * does not match the documented schema, any secured answer without a valid key, any secret echoed.
 */
describe('fuzzing every operation of the OpenAPI document', () => {
  let app: TestApp;
  let upstream: Upstream;
  const keys: Record<Auth, string | undefined> = {
    valid: undefined,
    none: undefined,
    unknown: 'pb_' + 'f'.repeat(40),
    'other-project': undefined,
  };
  const secrets: string[] = [];
  /** Names and ids that exist, so that requests reach past the 404s. */
  const known: Record<string, string[]> = { app_name: [], function_name: [], linked_account_id: [] };
  const ownerIds: string[] = [];
  /** Each project's linked-account ids: the other project must never reach them. */
  const foreignIds = { own: [] as string[], other: [] as string[] };

  beforeAll(async () => {
    app = await TestApp.start({ LOG_LEVEL: 'silent' });
    upstream = await Upstream.start();
    const project = await app.ctx.newProject('fuzzed');
    const other = await app.ctx.newProject('other');
    keys.valid = project.apiKey;
    keys['other-project'] = other.apiKey;
    const target = await app.ctx.newApp({
      security_schemes: { api_key: { location: 'header', name: 'X-Key' }, no_auth: {} },
    });
    const fn = await app.ctx.newFunction(target.name, {
      protocol_data: { method: 'POST', path: '/run', server_url: upstream.url },
    });
    await app.ctx.newAppConfiguration(project.projectId, target.name, { security_scheme: 'api_key' } as never);
    const linkedSecret = `linked-secret-${Date.now()}`;
    const account = await app.ctx.newLinkedAccount(
      project.projectId,
      target.name,
      { linked_account_owner_id: 'fuzz-owner' },
      { api_key: linkedSecret },
    );
    const otherAccount = await app.ctx.newLinkedAccount(
      other.projectId,
      target.name,
      {},
      { api_key: 'other-secret-xyz' },
    );
    secrets.push(project.apiKey, other.apiKey, linkedSecret, 'other-secret-xyz');
    known.app_name.push(target.name, 'NO_SUCH_APP');
    known.function_name.push(fn.name, `${target.name}__NOPE`);
    known.linked_account_id.push(account.id, otherAccount.id);
    foreignIds.own.push(account.id);
    foreignIds.other.push(otherAccount.id);
    ownerIds.push('fuzz-owner', otherAccount.linked_account_owner_id);
  });

  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  function requestArbitrary(operation: Operation): fc.Arbitrary<FuzzRequest> {
    const pathParameters = operation.parameters.filter((p) => p.in === 'path');
    const queryParameters = operation.parameters.filter((p) => p.in === 'query');
    const pathValue = (name: string, schema: Record<string, unknown>) =>
      fc.oneof(
        {
          arbitrary: fc
            .constantFrom(...(known[name] ?? ['X']))
            .map((v) => ({ text: encodeURIComponent(v), bad: false })),
          weight: 4,
        },
        {
          arbitrary: arbitraries
            .valid({ ...schema, minLength: 1 })
            .map((v) => ({ text: encodeURIComponent(String(v)), bad: false })),
          weight: 2,
        },
        {
          arbitrary: hostileText()
            .filter((t) => t.trim() !== '')
            .map((t) => ({ text: encodeURIComponent(t), bad: false })),
          weight: 2,
        },
        {
          arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '%C3%28').map((text) => ({ text, bad: true })),
          weight: 1,
        },
      );
    const queryValue = (name: string, schema: Record<string, unknown>): fc.Arbitrary<string[]> => {
      const one: fc.Arbitrary<string> = fc.oneof(
        {
          arbitrary: arbitraries
            .valid(schema.type === 'array' ? (schema.items as Record<string, unknown>) : schema)
            .map(String),
          weight: 3,
        },
        {
          arbitrary: fc.constantFrom(...(known[name] ?? ownerIds)),
          weight: name in known || name.includes('owner') ? 2 : 0,
        },
        { arbitrary: hostileText(), weight: 1 },
      );
      return schema.type === 'array'
        ? fc.array(one, { maxLength: 4 })
        : fc.oneof(
            { arbitrary: one.map((v) => [v]), weight: 5 },
            { arbitrary: fc.array(one, { minLength: 2, maxLength: 3 }), weight: 1 },
          );
    };
    const body: fc.Arbitrary<unknown> = operation.bodyProperties
      ? fc.oneof(
          { arbitrary: arbitraries.valid(requestBodySchema(operation)), weight: 4 },
          { arbitrary: mixedBody(operation), weight: 3 },
          { arbitrary: hostileValue(), weight: 1 },
        )
      : fc.constant(undefined);
    return fc
      .record({
        auth: fc.constantFrom<Auth>('valid', 'valid', 'valid', 'valid', 'none', 'unknown', 'other-project'),
        pathParts: fc.tuple(...pathParameters.map((p) => pathValue(p.name, p.schema)), fc.constant(null)),
        query: fc.tuple(
          ...queryParameters.map((p) => fc.option(queryValue(p.name, p.schema), { nil: undefined, freq: 2 })),
          fc.constant(undefined),
        ),
        body,
      })
      .map(({ auth, pathParts, query, body }) => {
        let malformedPath = false;
        let index = 0;
        const path = operation.path.replace(/\{[^}]+\}/g, () => {
          const part = pathParts[index++] as { text: string; bad: boolean };
          malformedPath ||= part.bad;
          return part.text;
        });
        const pairs: [string, string][] = [];
        queryParameters.forEach((parameter, i) => {
          for (const value of query[i] ?? []) {
            pairs.push([parameter.name, value]);
          }
        });
        return { auth, path, malformedPath, query: pairs, body };
      });
  }

  function requestBodySchema(operation: Operation): Record<string, unknown> {
    const raw = document.paths[operation.path][operation.method.toLowerCase()];
    return raw.requestBody.content['application/json'].schema as Record<string, unknown>;
  }

  /** The body's own fields, each valid or hostile, some dropped. */
  function mixedBody(operation: Operation): fc.Arbitrary<unknown> {
    const schema = arbitraries.resolve(requestBodySchema(operation));
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, property] of Object.entries(properties)) {
      record[name] = arbitraries.mixed(property);
    }
    if (Object.keys(record).length === 0) {
      return fc.dictionary(fc.string(), hostileValue(), { maxKeys: 3 });
    }
    return fc
      .record(record, { requiredKeys: [] })
      .map((value) =>
        name(operation) === 'executeFunction' && typeof value === 'object' && value
          ? { linked_account_owner_id: 'fuzz-owner', ...value }
          : value,
      );
  }

  const name = (operation: Operation) => operation.operationId;

  it('covers every operation of the document', () => {
    expect(operations.length).toBeGreaterThanOrEqual(25);
    expect(new Set(operations.map(name)).size).toBe(operations.length);
  });

  it.each(operations.map((operation) => [`${operation.method} ${operation.path}`, operation] as const))(
    '%s',
    async (_, operation) => {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(operation), async (request) => {
          const res = await send(app, operation.method, request, keys);
          const where = `${operation.method} ${request.path} → ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, where).toBeLessThan(500);
          expect(Object.keys(operation.responses), `undocumented status: ${where}`).toContain(String(res.status));
          const keyless = request.auth === 'none' || request.auth === 'unknown';
          if (operation.secured && keyless && !request.malformedPath) {
            expect(res.status, `answered without a valid key: ${where}`).toBe(401);
          }
          const foreign = request.auth === 'valid' ? foreignIds.other : foreignIds.own;
          if (!keyless && foreign.some((id) => request.path.includes(id))) {
            expect([404, 422], `another project's resource answered: ${where}`).toContain(res.status);
          }
          const validate = responseValidator(operation, res.status);
          if (validate) {
            const body: unknown = JSON.parse(res.text);
            expect(validate(body), `${where}\n${JSON.stringify(validate.errors)}`).toBe(true);
          } else {
            expect(res.text, where).toBe('');
          }
          const echoed = [res.text, JSON.stringify(res.headers)].join('\n');
          for (const secret of secrets) {
            expect(echoed.includes(secret), `secret echoed: ${where}`).toBe(false);
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    },
    600_000,
  );
});
