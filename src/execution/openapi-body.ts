import { randomBytes } from 'node:crypto';
import { type BodyRule, isTextual, type ParameterRule } from '../functions/openapi-wire.js';
import { bracketPieces, InexpressibleInputError, percentEncode, queryPieces } from './parameter-styles.js';

/** A body ready to send: its bytes and the Content-Type header that names them. */
export interface Payload {
  bytes: string | Buffer;
  contentType: string;
}

type Json = Record<string, unknown>;

const FIELD = 'function_input.body';

/** The body of an imported operation in the media type its definition states. */
export function encodeBody(rule: BodyRule, value: unknown): Payload {
  const mediaType = rule.media_type;
  const lower = mediaType.toLowerCase();
  if (lower.startsWith('application/x-www-form-urlencoded')) {
    return { bytes: formBody(objectBody(value), rule.encoding ?? {}), contentType: mediaType };
  }
  if (lower.startsWith('multipart/')) {
    return multipartBody(objectBody(value), rule, mediaType);
  }
  if (isJson(lower)) {
    return { bytes: JSON.stringify(value), contentType: mediaType === '*/*' ? 'application/json' : mediaType };
  }
  if (isTextual(lower)) {
    return { bytes: typeof value === 'string' ? value : JSON.stringify(value), contentType: mediaType };
  }
  if (rule.base64_text) {
    return { bytes: base64Text(value), contentType: mediaType };
  }
  return { bytes: binary(value, FIELD), contentType: mediaType };
}

export function isJson(mediaType: string): boolean {
  return /^application\/([^;]*\+)?json\b/i.test(mediaType) || mediaType === '*/*';
}

function objectBody(value: unknown): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InexpressibleInputError(FIELD, 'a form body must be an object of named fields');
  }
  return value as Json;
}

/**
 * `application/x-www-form-urlencoded`: each property as its `encoding` says (style, explode,
 * allowReserved, or a contentType such as JSON); without one, primitives as `key=value`, arrays of
 * primitives as repeated keys (form, exploded: OpenAPI's default), objects and arrays of objects in
 * bracket notation (`metadata%5Bplan%5D=pro`), the way Rails, PHP, qs and Stripe read nested fields.
 */
export function formBody(body: Json, encoding: Record<string, ParameterRule>): string {
  const pieces: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined) {
      continue;
    }
    const rule = encoding[name];
    const field = `${FIELD}.${name}`;
    if (rule) {
      pieces.push(...queryPieces(name, value, rule, field));
    } else if (Array.isArray(value) ? value.some(isStructured) : isStructured(value)) {
      bracketPieces(percentEncode(name), value, field, percentEncode, pieces);
    } else {
      pieces.push(...queryPieces(name, value, undefined, field));
    }
  }
  return pieces.join('&');
}

function isStructured(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

/**
 * `multipart/form-data`: one part per property (one per item of an array), each with the
 * Content-Type its encoding gives or OpenAPI's default (text for primitives, JSON for objects, the
 * file's own media type for files). Written here rather than with undici's FormData: FormData gives a
 * part a Content-Type only as a file (with a file name), and OpenAPI's JSON parts are not files.
 */
function multipartBody(body: Json, rule: BodyRule, mediaType: string): Payload {
  const boundary = `----patchbay${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  const files = new Set(rule.files ?? []);
  const part = (headers: string[], content: Buffer | string) => {
    chunks.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`, 'utf8'));
    chunks.push(typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
    chunks.push(Buffer.from('\r\n', 'utf8'));
  };
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined) {
      continue;
    }
    const field = `${FIELD}.${name}`;
    const items = Array.isArray(value) && (files.has(name) || !rule.encoding?.[name]?.content_type) ? value : [value];
    items.forEach((item, i) => {
      const at = items === value ? `${field}[${i}]` : field;
      const disposition = `Content-Disposition: form-data; name="${quoted(name)}"`;
      if (files.has(name)) {
        const file = fileOf(item, at);
        part([`${disposition}; filename="${quoted(file.filename)}"`, `Content-Type: ${file.mediaType}`], file.bytes);
        return;
      }
      const contentType = rule.encoding?.[name]?.content_type ?? (isStructured(item) ? 'application/json' : undefined);
      if (contentType === undefined) {
        part([disposition], String(item));
      } else if (isJson(contentType) || isStructured(item)) {
        part([disposition, `Content-Type: ${contentType}`], JSON.stringify(item));
      } else {
        part([disposition, `Content-Type: ${contentType}`], String(item));
      }
    });
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`, 'utf8'));
  return { bytes: Buffer.concat(chunks), contentType: `${mediaType.split(';')[0].trim()}; boundary=${boundary}` };
}

/** A file input: `{ base64, filename?, media_type? }`. */
function fileOf(value: unknown, field: string): { bytes: Buffer; filename: string; mediaType: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InexpressibleInputError(field, 'a file is given as { base64, filename, media_type }');
  }
  const file = value as Json;
  return {
    bytes: binary(file.base64, `${field}.base64`),
    filename: typeof file.filename === 'string' && file.filename !== '' ? file.filename : 'file',
    mediaType:
      typeof file.media_type === 'string' && file.media_type !== '' ? file.media_type : 'application/octet-stream',
  };
}

/**
 * Base64 text as the document's `format: byte` says (RFC 4648, padded, `+` and `/`): the bytes the input
 * gives (base64 as the caller wrote it, URL-safe or unpadded too) written out again, so that `jt` goes as `jg==`.
 */
function base64Text(value: unknown): string {
  return binary(value, FIELD).toString('base64');
}

/** Binary content given as base64 text. */
function binary(value: unknown, field: string): Buffer {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value.replace(/\s+/g, ''))) {
    throw new InexpressibleInputError(field, 'binary content is given as base64 text');
  }
  return Buffer.from(value, 'base64');
}

/** A quoted-string value of Content-Disposition: `"` and line breaks escaped as browsers do. */
function quoted(text: string): string {
  return text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
