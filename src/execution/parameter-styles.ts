import { defaultExplode, type ParameterRule, type ParameterStyle } from '../functions/openapi-wire.js';

/**
 * OpenAPI parameter serialization (3.1.1, "Style Values" and "Style Examples"): a value of a
 * primitive, an array or an object written in its declared style, percent-encoded as RFC 3986 says
 * for the part of the URL it goes in. Not a library: the packages that serialize OpenAPI styles
 * either build a whole client around a document (openapi-client-axios, swagger-client: 2–9 MB with
 * their dependencies) or differ from the specification's tables (label with `explode: false`,
 * percent-encoding of `|`, `[`, `]`); these tables are what the tests check byte for byte.
 */

/** An input the declared style cannot express; execution answers it as invalid function input. */
export class InexpressibleInputError extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

type Json = Record<string, unknown>;

/** RFC 3986 `unreserved` kept, everything else percent-encoded as UTF-8 (encodeURIComponent keeps `!'()*` too). */
export function percentEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** `allowReserved`: RFC 3986 reserved characters stay as they are, except `#`, which would end the URL. */
function reservedEncode(text: string): string {
  return encodeURI(text)
    .replace(/%25([0-9A-Fa-f]{2})/g, '%$1')
    .replace(/#/g, '%23');
}

/** The text of a primitive; an object or array where a primitive must go cannot be expressed. */
function primitiveText(value: unknown, field: string, style: string): string {
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return String(value);
  }
  if (value === null || value === undefined) {
    return '';
  }
  throw new InexpressibleInputError(
    field,
    `a nested ${Array.isArray(value) ? 'array' : 'object'} cannot be sent in the ${style} style`,
  );
}

interface Shape {
  kind: 'primitive' | 'array' | 'object';
  /** Encoded items (array) or encoded name/value pairs (object, flattened). */
  items: string[];
  pairs: [string, string][];
  text: string;
}

function shapeOf(value: unknown, field: string, style: string, encode: (text: string) => string): Shape {
  if (Array.isArray(value)) {
    return {
      kind: 'array',
      items: value.map((item, i) => encode(primitiveText(item, `${field}[${i}]`, style))),
      pairs: [],
      text: '',
    };
  }
  if (typeof value === 'object' && value !== null) {
    return {
      kind: 'object',
      items: [],
      pairs: Object.entries(value as Json)
        .filter(([, child]) => child !== undefined)
        .map(([key, child]) => [encode(key), encode(primitiveText(child, `${field}.${key}`, style))]),
      text: '',
    };
  }
  return { kind: 'primitive', items: [], pairs: [], text: encode(primitiveText(value, field, style)) };
}

function ruleOf(
  rule: ParameterRule | undefined,
  fallback: ParameterStyle,
): { style: ParameterStyle; explode: boolean } {
  const style = rule?.style ?? fallback;
  return { style, explode: rule?.explode ?? defaultExplode(style) };
}

/** A value described by `content`: JSON text for a JSON media type, else its text. */
function contentText(value: unknown, contentType: string): string {
  if (typeof value === 'string' && !/json/i.test(contentType)) {
    return value;
  }
  return JSON.stringify(value);
}

/** The path segment text of `{name}` (simple, label or matrix). */
export function pathValue(name: string, value: unknown, rule: ParameterRule | undefined, field: string): string {
  if (rule?.content_type) {
    return percentEncode(contentText(value, rule.content_type));
  }
  const { style, explode } = ruleOf(rule, 'simple');
  const shape = shapeOf(value, field, style, percentEncode);
  const key = percentEncode(name);
  // eslint-disable-next-line @typescript-eslint/switch-exhaustiveness-check -- every other style is simple in a path
  switch (style) {
    case 'label': {
      const joiner = explode ? '.' : ',';
      if (shape.kind === 'array') {
        return `.${shape.items.join(joiner)}`;
      }
      if (shape.kind === 'object') {
        return `.${shape.pairs.map(([k, v]) => (explode ? `${k}=${v}` : `${k},${v}`)).join(joiner)}`;
      }
      return `.${shape.text}`;
    }
    case 'matrix': {
      if (shape.kind === 'array') {
        return explode ? shape.items.map((item) => `;${key}=${item}`).join('') : `;${key}=${shape.items.join(',')}`;
      }
      if (shape.kind === 'object') {
        return explode
          ? shape.pairs.map(([k, v]) => `;${k}=${v}`).join('')
          : `;${key}=${shape.pairs.map(([k, v]) => `${k},${v}`).join(',')}`;
      }
      return shape.text === '' ? `;${key}` : `;${key}=${shape.text}`;
    }
    default:
      return simple(shape, explode);
  }
}

/** A header value (simple style; no percent-encoding, header values are not URLs). */
export function headerValue(value: unknown, rule: ParameterRule | undefined, field: string): string {
  if (rule?.content_type) {
    return contentText(value, rule.content_type);
  }
  const { explode } = ruleOf(rule, 'simple');
  return simple(
    shapeOf(value, field, 'simple', (text) => text),
    explode,
  );
}

function simple(shape: Shape, explode: boolean): string {
  if (shape.kind === 'array') {
    return shape.items.join(',');
  }
  if (shape.kind === 'object') {
    return shape.pairs.map(([k, v]) => (explode ? `${k}=${v}` : `${k},${v}`)).join(',');
  }
  return shape.text;
}

const DELIMITERS: Partial<Record<ParameterStyle, string>> = {
  form: ',',
  spaceDelimited: '%20',
  pipeDelimited: '%7C',
  tabDelimited: '%09',
};

/**
 * Encoded `name=value` pieces of a query parameter (form, spaceDelimited, pipeDelimited, deepObject),
 * also used for the properties of a form body (`space` is then `+`).
 */
export function queryPieces(name: string, value: unknown, rule: ParameterRule | undefined, field: string): string[] {
  const encode = rule?.allow_reserved ? reservedEncode : percentEncode;
  const key = percentEncode(name);
  if (rule?.content_type) {
    return [`${key}=${encode(contentText(value, rule.content_type))}`];
  }
  const { style, explode } = ruleOf(rule, 'form');
  if (style === 'deepObject') {
    if (typeof value !== 'object' || value === null) {
      return [`${key}=${encode(primitiveText(value, field, style))}`];
    }
    const pieces: string[] = [];
    bracketPieces(key, value, field, encode, pieces);
    return pieces;
  }
  const shape = shapeOf(value, field, style, encode);
  if (shape.kind === 'primitive') {
    return [`${key}=${shape.text}`];
  }
  if (shape.kind === 'array') {
    return explode
      ? shape.items.map((item) => `${key}=${item}`)
      : [`${key}=${shape.items.join(DELIMITERS[style] ?? ',')}`];
  }
  if (explode) {
    return shape.pairs.map(([k, v]) => `${k}=${v}`);
  }
  return [
    `${key}=${shape.pairs.map(([k, v]) => `${k}${DELIMITERS[style] ?? ','}${v}`).join(DELIMITERS[style] ?? ',')}`,
  ];
}

/**
 * Bracket notation as Rails, PHP, qs and Stripe read it: `color[R]=100`, nested objects `a[b][c]=1`,
 * arrays by index `items[0][price]=p1`, with the brackets percent-encoded as RFC 3986 asks.
 */
export function bracketPieces(
  key: string,
  value: unknown,
  field: string,
  encode: (text: string) => string,
  pieces: string[],
): void {
  if (value === undefined) {
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => bracketPieces(`${key}%5B${i}%5D`, item, `${field}[${i}]`, encode, pieces));
    return;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [name, child] of Object.entries(value as Json)) {
      bracketPieces(`${key}%5B${percentEncode(name)}%5D`, child, `${field}.${name}`, encode, pieces);
    }
    return;
  }
  pieces.push(`${key}=${encode(primitiveText(value, field, 'deepObject'))}`);
}

/** `name=value` pieces of a cookie parameter (form style; the comma of a non-exploded list stays a comma). */
export function cookiePieces(name: string, value: unknown, rule: ParameterRule | undefined, field: string): string[] {
  if (rule?.content_type) {
    return [`${name}=${percentEncode(contentText(value, rule.content_type))}`];
  }
  const { explode } = ruleOf(rule, 'form');
  const shape = shapeOf(value, field, 'form', percentEncode);
  if (shape.kind === 'primitive') {
    return [`${name}=${shape.text}`];
  }
  if (shape.kind === 'array') {
    return explode ? shape.items.map((item) => `${name}=${item}`) : [`${name}=${shape.items.join(',')}`];
  }
  return explode
    ? shape.pairs.map(([k, v]) => `${k}=${v}`)
    : [`${name}=${shape.pairs.map(([k, v]) => `${k},${v}`).join(',')}`];
}
