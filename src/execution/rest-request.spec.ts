import { describe, expect, it } from 'vitest';
import { retryAfterMs, toOutcome } from './rest-executor.js';
import { buildRestRequest, formEncode, placeValue, serializeRequest } from './rest-request.js';

describe('formEncode', () => {
  it('repeats keys for arrays of scalars and uses brackets for objects and arrays of objects', () => {
    expect(
      formEncode({ a: 'x y', n: 1, ok: true, list: [1, 2], meta: { k: 'v' }, items: [{ p: 'p1' }], skip: null }),
    ).toBe('a=x+y&n=1&ok=true&list=1&list=2&meta%5Bk%5D=v&items%5B0%5D%5Bp%5D=p1');
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates, and ignores the unreadable', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(undefined)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    expect(retryAfterMs(inTwoSeconds)).toBeGreaterThan(500);
    expect(retryAfterMs(inTwoSeconds)).toBeLessThanOrEqual(2000);
    expect(retryAfterMs(new Date(Date.now() - 60_000).toUTCString())).toBe(0);
  });
});

describe('buildRestRequest', () => {
  it('keeps the server query, replaces a same-named query credential and merges cookies', () => {
    const request = buildRestRequest(
      { method: 'get', path: '/x', server_url: 'https://api.example.com/v2/?version=3' },
      { query: { key: 'from-input', q: 'a' }, header: { Cookie: 'given=1' }, cookie: { c: 'd e' } },
    );
    placeValue(request, 'query', 'key', 'secret');
    const wire = serializeRequest(request);
    expect(wire.origin).toBe('https://api.example.com');
    expect(wire.path).toBe('/v2/x?version=3&q=a&key=secret');
    expect(wire.method).toBe('GET');
    expect(wire.headers.Cookie).toBe('given=1; c=d%20e');
  });

  it('refuses a path parameter without a value', () => {
    expect(() => buildRestRequest({ method: 'GET', path: '/a/{id}', server_url: 'http://h' }, {})).toThrow(
      'the path parameter id has no value',
    );
  });
});

describe('toOutcome', () => {
  it('truncates a huge error body', () => {
    const outcome = toOutcome({ status: 500, headers: {}, body: Buffer.from('e'.repeat(5000)) });
    expect(outcome.error).toBe(`Upstream answered HTTP 500: ${'e'.repeat(4000)}… (1000 more characters)`);
  });

  const ok = (contentType: string | undefined, body: Buffer | string) =>
    toOutcome({
      status: 200,
      headers: contentType === undefined ? {} : { 'content-type': contentType },
      body: Buffer.from(body),
    }).data;

  it('maps JSON, text, binary and empty bodies into data', () => {
    expect(ok('application/json; charset=utf-8', '{"a":[1]}')).toEqual({ a: [1] });
    expect(ok('application/problem+json', '{"title":"x"}')).toEqual({ title: 'x' });
    expect(ok('text/html', '"quoted"')).toBe('quoted');
    expect(ok('application/json', 'not json')).toBe('not json');
    expect(ok('text/csv', 'a,b\n1,2')).toBe('a,b\n1,2');
    expect(ok('application/xml', '<a/>')).toBe('<a/>');
    expect(ok(undefined, 'plain')).toBe('plain');
    expect(ok('text/plain; charset="ISO-8859-1"', Buffer.from([0xe9]))).toBe('é');
    expect(ok('text/plain; charset=no-such-charset', 'ok')).toBe('ok');
    expect(ok('image/jpeg', Buffer.from([0xff, 0xd8, 0xff]))).toEqual({
      media_type: 'image/jpeg',
      size_bytes: 3,
      base64: '/9j/',
    });
    expect(ok('Application/Octet-Stream', 'abc')).toEqual({
      media_type: 'application/octet-stream',
      size_bytes: 3,
      base64: 'YWJj',
    });
    expect(ok(undefined, Buffer.from([0xc3]))).toEqual({
      media_type: 'application/octet-stream',
      size_bytes: 1,
      base64: 'ww==',
    });
    expect(ok('image/png', '')).toEqual({});
    expect(ok(undefined, '  ')).toEqual({});
  });
});
