import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiImportReport } from '../../../src/catalog/openapi/openapi-import.service.js';
import type { TestApp } from '../../helpers/test-app.js';
import { closeImported, type ImportedDocument, importDocument, operationCalls } from './imported-document.js';
import type { Upstream } from './upstream.js';

const DOCUMENT = 'test/fixtures/openapi/wire-3.0.json';

/**
 * A hand-made document with every parameter style, form and multipart encodings and alternative
 * bodies, imported and executed through POST /v1/functions/{name}/execute against a local upstream:
 * each test asserts the exact bytes the upstream received.
 */
describe('imported operations go out exactly as their OpenAPI document says', { timeout: 120_000 }, () => {
  let app: TestApp;
  let upstream: Upstream;
  let report: OpenApiImportReport;

  let imported: ImportedDocument;
  beforeAll(async () => {
    imported = await importDocument(DOCUMENT, 'WIRE', '/v2');
    ({ app, upstream, report } = imported);
  }, 180_000);

  afterAll(() => closeImported(imported));

  const { execute, sent } = operationCalls(() => imported, 'WIRE');

  const string = 'blue';
  const array = ['blue', 'black', 'brown'];
  const object = { R: 100, G: 200, B: 150 };

  it('imports the document, skipping only the operation the catalogue refuses, with its reason', () => {
    expect(report.refused).toEqual([]);
    const [document] = report.documents;
    expect(document.skipped).toEqual([
      {
        operation: 'POST /xml-required',
        reason: expect.stringMatching(/^request body only as text\/xml described by fields/),
      },
      { operation: 'GET /broken', reason: expect.stringMatching(/breaks the catalogue's rules: .*duplicate/) },
    ]);
    expect(document.reduced).toContainEqual({
      operation: 'POST /xml-optional',
      reason: expect.stringMatching(
        /^optional request body left out: request body only as text\/xml described by fields/,
      ),
    });
    expect(document.functions).toBe(25);
  });

  it.each([
    ['path_simple', 'simple', 'blue', 'blue,black,brown', 'R,100,G,200,B,150'],
    ['path_simple_x', 'simple-x', 'blue', 'blue,black,brown', 'R=100,G=200,B=150'],
    ['path_label', 'label', '.blue', '.blue,black,brown', '.R,100,G,200,B,150'],
    ['path_label_x', 'label-x', '.blue', '.blue.black.brown', '.R=100.G=200.B=150'],
    ['path_matrix', 'matrix', ';color=blue', ';color=blue,black,brown', ';color=R,100,G,200,B,150'],
    ['path_matrix_x', 'matrix-x', ';color=blue', ';color=blue;color=black;color=brown', ';R=100;G=200;B=150'],
  ])('path %s: the specification’s color examples', async (operationId, prefix, primitive, list, map) => {
    expect((await sent(operationId, { path: { color: string } })).url).toBe(`/v2/${prefix}/${primitive}`);
    expect((await sent(operationId, { path: { color: array } })).url).toBe(`/v2/${prefix}/${list}`);
    expect((await sent(operationId, { path: { color: object } })).url).toBe(`/v2/${prefix}/${map}`);
  });

  it('query: form, form without explode, spaceDelimited, pipeDelimited, deepObject', async () => {
    const arrays = await sent('query_styles', {
      query: { form: array, formNo: array, space: array, pipe: array },
    });
    expect(arrays.url).toBe(
      '/v2/query?form=blue&form=black&form=brown&formNo=blue,black,brown&space=blue%20black%20brown&pipe=blue%7Cblack%7Cbrown',
    );
    const objects = await sent('query_styles', {
      query: { form: object, formNo: object, space: object, pipe: object, deep: object },
    });
    expect(objects.url).toBe(
      '/v2/query?R=100&G=200&B=150&formNo=R,100,G,200,B,150&space=R%20100%20G%20200%20B%20150' +
        '&pipe=R%7C100%7CG%7C200%7CB%7C150&deep%5BR%5D=100&deep%5BG%5D=200&deep%5BB%5D=150',
    );
    const filter = await sent('query_styles', { query: { created: { gte: 10, lt: 20 } } });
    expect(filter.url).toBe('/v2/query?created%5Bgte%5D=10&created%5Blt%5D=20');
    expect(filter.query.get('created[gte]')).toBe('10');
  });

  it('query: percent-encoding, allowReserved, and a JSON-content parameter', async () => {
    const received = await sent('query_styles', {
      query: { form: "a b&c/é!'", reserved: 'a/b?c:d', filter: { tags: ['x', 'y'], n: 1 } },
    });
    expect(received.url).toBe(
      '/v2/query?form=a%20b%26c%2F%C3%A9%21%27&reserved=a/b?c:d&filter=%7B%22tags%22%3A%5B%22x%22%2C%22y%22%5D%2C%22n%22%3A1%7D',
    );
    expect(JSON.parse(received.query.get('filter') as string)).toEqual({ tags: ['x', 'y'], n: 1 });
  });

  it('headers (simple) and cookies (form)', async () => {
    const received = await sent('headers_and_cookies', {
      header: { 'X-Color': array, 'X-Color-Exploded': object },
      cookie: { color: array, session: 'a b' },
    });
    expect(received.headers['x-color']).toBe('blue,black,brown');
    expect(received.headers['x-color-exploded']).toBe('R=100,G=200,B=150');
    expect(received.headers.cookie).toBe('color=blue,black,brown; session=a%20b');
    expect(received.headers['content-type']).toBeUndefined();
  });

  it('a form body with per-property encoding; nested objects in bracket notation', async () => {
    const received = await sent('form_body', {
      body: {
        name: 'Ada Lovelace',
        tags: ['a', 'b'],
        labels: ['x', 'y'],
        expand: ['customer', 'invoice'],
        metadata: { plan: 'pro', 'a b': 'c&d' },
        payload: { a: 1 },
      },
    });
    expect(received.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(received.body).toBe(
      'name=Ada%20Lovelace&tags=a,b&labels=x&labels=y&expand%5B0%5D=customer&expand%5B1%5D=invoice' +
        '&metadata%5Bplan%5D=pro&metadata%5Ba%20b%5D=c%26d&payload=%7B%22a%22%3A1%7D',
    );
    expect(Object.fromEntries(new URLSearchParams(received.body))).toMatchObject({
      'metadata[plan]': 'pro',
      'metadata[a b]': 'c&d',
    });
  });

  it('multipart/form-data: a field, a JSON part and a file given as base64 with its name and type', async () => {
    const received = await sent('upload_file', {
      body: {
        title: 'Report',
        meta: { size: 3 },
        file: { base64: Buffer.from([0, 1, 255]).toString('base64'), filename: 'r.bin', media_type: 'image/png' },
      },
    });
    const contentType = received.headers['content-type'] as string;
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(contentType)?.[1];
    expect(boundary).toBeDefined();
    expect(received.bytes.toString('latin1')).toBe(
      [
        `--${boundary}`,
        'Content-Disposition: form-data; name="title"',
        '',
        'Report',
        `--${boundary}`,
        'Content-Disposition: form-data; name="meta"',
        'Content-Type: application/json',
        '',
        '{"size":3}',
        `--${boundary}`,
        'Content-Disposition: form-data; name="file"; filename="r.bin"',
        'Content-Type: image/png',
        '',
        Buffer.from([0, 1, 255]).toString('latin1'),
        `--${boundary}--`,
        '',
      ].join('\r\n'),
    );
    // A real multipart parser reads the same parts back.
    const form = await new Response(received.bytes, { headers: { 'content-type': contentType } }).formData();
    expect(form.get('title')).toBe('Report');
    const file = form.get('file') as File;
    expect(file.name).toBe('r.bin');
    expect(file.type).toBe('image/png');
    expect([...new Uint8Array(await file.arrayBuffer())]).toEqual([0, 1, 255]);
  });

  it('a vendor JSON media type is sent as itself, chosen before XML, and the choice is stated in the definition', async () => {
    const received = await sent('vendor_json', { body: { data: { id: '7' } } });
    expect(received.headers['content-type']).toBe('application/vnd.api+json');
    expect(received.body).toBe('{"data":{"id":"7"}}');
    const definition = await app.get('/v1/functions/WIRE__VENDOR_JSON/definition?format=openai');
    expect(JSON.stringify(definition.body)).toContain(
      'Sent as application/vnd.api+json (the API also takes application/xml)',
    );
  });

  it('a oneOf of objects is imported; an input matching exactly one branch is sent; the definition shows anyOf', async () => {
    const received = await sent('choice_body', { body: { kind: 'dog', bark: 3 } });
    expect(received.body).toBe('{"kind":"dog","bark":3}');
    const definition = await app.get('/v1/functions/WIRE__CHOICE_BODY/definition?format=anthropic');
    const body = (definition.body as { input_schema: { properties: { body: Record<string, unknown> } } }).input_schema
      .properties.body;
    expect(body.anyOf).toHaveLength(2);
    expect(JSON.stringify(definition.body)).not.toMatch(/oneOf|discriminator/);
    const before = upstream.received.length;
    const neither = await execute('choice_body', { body: { kind: 'cow' } });
    expect(neither.status).toBe(400);
    expect(upstream.received.length).toBe(before);
  });

  it('a required empty-object body is sent as {}; text and binary bodies in their media types', async () => {
    const empty = await sent('empty_body', { body: {} });
    expect(empty.body).toBe('{}');
    expect(empty.headers['content-type']).toBe('application/json');
    const text = await sent('text_body', { body: 'plain words' });
    expect(text.headers['content-type']).toBe('text/plain');
    expect(text.body).toBe('plain words');
    const binary = await sent('binary_body', { body: Buffer.from('hello').toString('base64') });
    expect(binary.headers['content-type']).toBe('application/octet-stream');
    expect(binary.body).toBe('hello');
    // `format: byte` puts base64 itself on the wire (Spotify's playlist cover, say).
    const cover = await sent('base64_image', { body: Buffer.from('jpeg').toString('base64') });
    expect(cover.headers['content-type']).toBe('image/jpeg');
    expect(cover.body).toBe('anBlZw==');
  });

  it('no body, no Content-Type', async () => {
    const received = await sent('optional_body', { query: { q: 'x' } });
    expect(received.url).toBe('/v2/optional?q=x');
    expect(received.headers['content-type']).toBeUndefined();
    expect(received.headers['content-length']).toBeUndefined();
  });

  it('a query value is never sent empty unless the parameter allows empty values; a default of "" is not offered', async () => {
    const definition = await app.get('/v1/functions/WIRE__EMPTY_VALUES/definition?format=openai');
    const query = (
      definition.body as {
        function: { parameters: { properties: { query: { properties: Record<string, Record<string, unknown>> } } } };
      }
    ).function.parameters.properties.query.properties;
    expect(query.state).not.toHaveProperty('default');
    const before = upstream.received.length;
    const empty = await execute('empty_values', { query: { state: '' } });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.body)).toContain('function_input.query.state');
    expect(upstream.received.length).toBe(before);
    // `allowEmptyValue: true` lets `flag=` go out as it is.
    expect((await sent('empty_values', { query: { state: 'open', flag: '' } })).url).toBe(
      '/v2/empty-values?state=open&flag=',
    );
  });

  it('the fragment APIs.guru adds to a path is not sent; Accept, Content-Type and Authorization parameters are ignored', async () => {
    expect((await sent('fragment_path', { query: {} })).url).toBe('/v2/aws/?Action=Describe');
    const definition = await app.get('/v1/functions/WIRE__IGNORED_HEADERS/definition?format=openai');
    expect(JSON.stringify(definition.body)).not.toMatch(/Accept|Content-Type|Authorization/);
    const received = await sent('ignored_headers', { header: { 'X-Trace': 't1' } });
    expect(received.headers['x-trace']).toBe('t1');
    expect(received.headers['content-type']).toBeUndefined();
    expect(received.headers.authorization).toBeUndefined();
  });

  it('a text/xml body described by fields is left out when optional (the rest of the call is sent)', async () => {
    const received = await sent('xml_optional', { query: { q: 'x' } });
    expect(received.url).toBe('/v2/xml-optional?q=x');
    expect(received.headers['content-type']).toBeUndefined();
    expect(received.body).toBe('');
  });

  it('a null is sent for a property that is required and nullable; elsewhere it means "not given"', async () => {
    const received = await sent('nullable_fields', { body: { name: null, note: null } });
    expect(received.body).toBe('{"name":null}');
  });

  it('a discriminator names each branch’s value (its mapping, else the schema’s name); another value is refused', async () => {
    expect((await sent('mapped_choice', { body: { type: 'route_server', asn: 1 } })).body).toBe(
      '{"type":"route_server","asn":1}',
    );
    expect((await sent('mapped_choice', { body: { type: 'Firewall', rules: 2 } })).body).toBe(
      '{"type":"Firewall","rules":2}',
    );
    const before = upstream.received.length;
    const other = await execute('mapped_choice', { body: { type: 'RouteServer', asn: 1 } });
    expect(other.status).toBe(400);
    expect(upstream.received.length).toBe(before);
  });

  it('a required property the schema does not describe is kept', async () => {
    const missing = await execute('required_undescribed', { body: { id: '1' } });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('function_input.body.extra: is required');
    const received = await sent('required_undescribed', { body: { id: '1', extra: [1] } });
    expect(received.body).toBe('{"id":"1","extra":[1]}');
  });

  it('an empty required path parameter and an input the style cannot express are refused before any upstream call', async () => {
    const before = upstream.received.length;
    const empty = await execute('vault_read', { path: { name: '' } });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(empty.body)).toContain('function_input.path.name: a path parameter must not be empty');
    const nested = await execute('query_styles', { query: { formNo: { a: { b: 1 } } } });
    expect(nested.status).toBe(400);
    expect(JSON.stringify(nested.body)).toContain('function_input.query.formNo.a');
    expect(upstream.received.length).toBe(before);
  });
});
