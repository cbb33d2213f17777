import { describe, expect, it } from 'vitest';
import type { ParameterRule, ParameterStyle } from '../functions/openapi-wire.js';
import { cookiePieces, headerValue, InexpressibleInputError, pathValue, queryPieces } from './parameter-styles.js';

// The specification's own examples (OpenAPI 3.1.1, "Style Examples"): `color` as a string, an array and an object.
const string = 'blue';
const array = ['blue', 'black', 'brown'];
const object = { R: 100, G: 200, B: 150 };

const rule = (style: ParameterStyle, explode: boolean): ParameterRule => ({ style, explode });
const path = (style: ParameterStyle, explode: boolean, value: unknown) =>
  pathValue('color', value, rule(style, explode), 'function_input.path.color');
const query = (style: ParameterStyle, explode: boolean, value: unknown) =>
  queryPieces('color', value, rule(style, explode), 'function_input.query.color').join('&');

describe('OpenAPI style examples, byte for byte', () => {
  it.each([
    ['matrix', false, ';color=blue', ';color=blue,black,brown', ';color=R,100,G,200,B,150'],
    ['matrix', true, ';color=blue', ';color=blue;color=black;color=brown', ';R=100;G=200;B=150'],
    ['label', false, '.blue', '.blue,black,brown', '.R,100,G,200,B,150'],
    ['label', true, '.blue', '.blue.black.brown', '.R=100.G=200.B=150'],
    ['simple', false, 'blue', 'blue,black,brown', 'R,100,G,200,B,150'],
    ['simple', true, 'blue', 'blue,black,brown', 'R=100,G=200,B=150'],
  ] as const)('path %s explode=%s', (style, explode, primitive, list, map) => {
    expect(path(style, explode, string)).toBe(primitive);
    expect(path(style, explode, array)).toBe(list);
    expect(path(style, explode, object)).toBe(map);
  });

  it.each([
    ['form', false, 'color=blue', 'color=blue,black,brown', 'color=R,100,G,200,B,150'],
    ['form', true, 'color=blue', 'color=blue&color=black&color=brown', 'R=100&G=200&B=150'],
    ['spaceDelimited', false, 'color=blue', 'color=blue%20black%20brown', 'color=R%20100%20G%20200%20B%20150'],
    ['pipeDelimited', false, 'color=blue', 'color=blue%7Cblack%7Cbrown', 'color=R%7C100%7CG%7C200%7CB%7C150'],
  ] as const)('query %s explode=%s', (style, explode, primitive, list, map) => {
    expect(query(style, explode, string)).toBe(primitive);
    expect(query(style, explode, array)).toBe(list);
    expect(query(style, explode, object)).toBe(map);
  });

  it('query deepObject, with the brackets percent-encoded', () => {
    expect(query('deepObject', true, object)).toBe('color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150');
    expect(query('deepObject', true, { created: { gte: 1, lt: 2 } })).toBe(
      'color%5Bcreated%5D%5Bgte%5D=1&color%5Bcreated%5D%5Blt%5D=2',
    );
  });

  it('Swagger 2.0 tsv (tabDelimited) arrays', () => {
    expect(query('tabDelimited', false, array)).toBe('color=blue%09black%09brown');
  });

  it('headers are simple style, not percent-encoded', () => {
    expect(headerValue(string, undefined, 'h')).toBe('blue');
    expect(headerValue(array, undefined, 'h')).toBe('blue,black,brown');
    expect(headerValue(object, undefined, 'h')).toBe('R,100,G,200,B,150');
    expect(headerValue(object, { explode: true }, 'h')).toBe('R=100,G=200,B=150');
    expect(headerValue('a b/c', undefined, 'h')).toBe('a b/c');
  });

  it('cookies are form style', () => {
    expect(cookiePieces('color', string, undefined, 'c')).toEqual(['color=blue']);
    expect(cookiePieces('color', array, { explode: false }, 'c')).toEqual(['color=blue,black,brown']);
    expect(cookiePieces('color', object, { explode: false }, 'c')).toEqual(['color=R,100,G,200,B,150']);
    expect(cookiePieces('color', array, undefined, 'c')).toEqual(['color=blue', 'color=black', 'color=brown']);
  });
});

describe('percent-encoding (RFC 3986)', () => {
  it('encodes everything but unreserved characters, UTF-8 for non-ASCII, %20 for a space', () => {
    expect(query('form', true, "a b&c=d/é!'()*~-._,")).toBe('color=a%20b%26c%3Dd%2F%C3%A9%21%27%28%29%2A~-._%2C');
    expect(path('simple', false, 'a/b?c#d')).toBe('a%2Fb%3Fc%23d');
  });

  it('a comma inside a value is encoded, the delimiter is not', () => {
    expect(query('form', false, ['a,b', 'c'])).toBe('color=a%2Cb,c');
  });

  it('allowReserved keeps reserved characters (but never `#`)', () => {
    const reserved = queryPieces('q', 'a/b?c:d@e,f;g=h&i[j]#k é', { allow_reserved: true }, 'q');
    expect(reserved).toEqual(['q=a/b?c:d@e,f;g=h&i%5Bj%5D%23k%20%C3%A9']);
  });

  it('a parameter described by content is JSON text in one value', () => {
    expect(queryPieces('filter', { a: [1, 'x'] }, { content_type: 'application/json' }, 'f')).toEqual([
      'filter=%7B%22a%22%3A%5B1%2C%22x%22%5D%7D',
    ]);
    expect(queryPieces('s', 'text', { content_type: 'application/json' }, 'f')).toEqual(['s=%22text%22']);
  });
});

describe('inputs a style cannot express', () => {
  it('a nested object in a form query parameter is refused naming the field', () => {
    expect(() => query('form', false, { a: { b: 1 } })).toThrow(InexpressibleInputError);
    expect(() => query('form', false, { a: { b: 1 } })).toThrow(/function_input\.query\.color\.a: a nested object/);
    expect(() => path('simple', false, [['x']])).toThrow(/function_input\.path\.color\[0\]: a nested array/);
  });
});
