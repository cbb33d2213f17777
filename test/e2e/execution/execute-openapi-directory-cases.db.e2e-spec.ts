import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/test-app.js';
import { closeImported, type ImportedDocument, importDocument, operationCalls } from './imported-document.js';
import type { Upstream } from './upstream.js';

const DOCUMENT = 'test/fixtures/openapi/wire-directory-cases.json';

/**
 * What the APIs.guru directory's documents write that the serialization tables do not cover (found by
 * `npm run bench:fidelity`), imported from a hand-made document and executed against a local upstream:
 * each test asserts the exact bytes the upstream received, or that nothing was sent.
 */
describe('imported operations go out as directory documents mean them', { timeout: 120_000 }, () => {
  let app: TestApp;
  let upstream: Upstream;

  let imported: ImportedDocument;
  beforeAll(async () => {
    imported = await importDocument(DOCUMENT, 'WIRE_CASES', '/v1');
    ({ app, upstream } = imported);
    expect(imported.report.refused).toEqual([]);
  }, 180_000);

  afterAll(() => closeImported(imported));

  const { execute, sent } = operationCalls(() => imported, 'WIRE_CASES');

  const refused = async (operationId: string, input: unknown, field: string) => {
    const before = upstream.received.length;
    const result = await execute(operationId, input);
    expect(result.status).toBe(400);
    expect(JSON.stringify(result.body)).toContain(field);
    expect(upstream.received.length).toBe(before);
  };

  const definition = async (operationId: string) =>
    (
      (await app.get(`/v1/functions/WIRE_CASES__${operationId.toUpperCase()}/definition?format=openai`)).body as {
        function: {
          parameters: { properties: Record<string, { properties: Record<string, Record<string, unknown>> }> };
        };
      }
    ).function.parameters.properties;

  it("a path's own text is percent-encoded where a path cannot carry it (a space, brackets), the rest kept", async () => {
    const received = await sent('literal_path', { path: { key: 'a b' } });
    expect(received.url).toBe("/v1/Your%20Pull%20Request%20%5Bv2%5D/docs('a%20b')");
  });

  it('a pattern with needless escapes (`\\-`, `\\:`) is kept for unicode mode, and an input breaking it is refused', async () => {
    const query = await definition('escaped_pattern');
    expect(query.path.properties.name.pattern).toBe('^[a-zA-Z0-9\\-_]+:v-[0-9]+$');
    // Written as an ECMAScript literal: the slashes are delimiters.
    expect(query.query.properties.at.pattern).toBe('^\\d{4}-\\d{2}$');
    expect((await sent('escaped_pattern', { path: { name: 'plan_1:v-2' }, query: { at: '2026-11' } })).url).toBe(
      '/v1/plans/plan_1%3Av-2?at=2026-11',
    );
    await refused('escaped_pattern', { path: { name: 'plan 1:v2' } }, 'function_input.path.name');
    await refused(
      'escaped_pattern',
      { path: { name: 'plan:v-1' }, query: { at: '2026/11' } },
      'function_input.query.at',
    );
  });

  it('a `format: byte` body goes out as RFC 4648 base64, padded, whatever base64 the caller wrote', async () => {
    expect((await sent('base64_cover', { body: 'jt' })).body).toBe('jg==');
    const bytes = Buffer.from([0xfb, 0xff, 0xbf]);
    expect((await sent('base64_cover', { body: bytes.toString('base64url') })).body).toBe(bytes.toString('base64'));
  });

  it('an untyped form field is text: its JSON goes as text, and an empty list (which writes nothing) is refused', async () => {
    const body = await definition('untyped_form_field');
    expect(body.body.properties.Channel.type).toBe('string');
    await refused('untyped_form_field', { body: { Channel: [] } }, 'function_input.body.Channel');
    expect((await sent('untyped_form_field', { body: { Channel: '{"a":1}', Sid: 's' } })).body).toBe(
      'Channel=%7B%22a%22%3A1%7D&Sid=s',
    );
  });

  it("a User-Agent the document declares is the caller's to give", async () => {
    const received = await sent('declared_user_agent', { header: { 'User-Agent': 'AppleCloudExtension/1.2 (x)' } });
    expect(received.headers['user-agent']).toBe('AppleCloudExtension/1.2 (x)');
    await refused('declared_user_agent', { header: { 'User-Agent': 'patchbay' } }, 'function_input.header.User-Agent');
  });

  it('a required query object may not be empty (it would write no value); a filled one goes out exploded', async () => {
    await refused('required_query_object', { query: { queryMap: {} } }, 'function_input.query.queryMap');
    expect((await sent('required_query_object', { query: { queryMap: { a: '1', b: 'x y' } } })).url).toBe(
      '/v1/services/search?a=1&b=x%20y',
    );
  });

  it('a recursive schema cut where it repeats keeps its type: a number for a nested expression is refused', async () => {
    await refused('recursive_filter', { body: { Not: { Not: 413 } } }, 'function_input.body');
    expect((await sent('recursive_filter', { body: { Not: { Not: { Key: 'k' } } } })).body).toBe(
      '{"Not":{"Not":{"Key":"k"}}}',
    );
  });
});
