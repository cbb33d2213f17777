import type { RestProtocolData } from '../functions/function.entity.js';
import type { OpenApiWire } from '../functions/openapi-wire.js';

/** Where a credential (or any parameter) goes in an HTTP request. */
export type ParameterLocation = 'header' | 'query' | 'cookie' | 'body';

/**
 * An upstream request under construction: the function's input is laid out here first, then the
 * security scheme adds its credentials, then `serialize` turns it into bytes on the wire.
 */
export interface OutboundRequest {
  method: string;
  /** scheme://host[:port] of the server. */
  origin: string;
  /** Already percent-encoded path, without the query string. */
  path: string;
  query: [string, string][];
  /** Keyed by lower-case name, so that a later value replaces an earlier one whatever its case. */
  headers: Map<string, [string, string]>;
  cookies: Map<string, string>;
  body: Record<string, unknown> | undefined;
  /** Already percent-encoded `name=value` pieces (imported operations), sent before `query`. */
  encodedQuery?: string[];
  /** Already encoded `name=value` cookie pieces (imported operations). */
  encodedCookies?: string[];
  /** A body already encoded in its media type (imported operations); `body` is then unused. */
  payload?: { bytes: string | Buffer; contentType: string };
}

export interface SerializedRequest {
  method: string;
  origin: string;
  /** Path and query string, sent as is (never re-parsed, so an encoded value cannot become `..`). */
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
}

/**
 * `protocol_data` of a REST function; the catalogue may add a content type and fixed headers, and an
 * imported operation carries its document's wire rules (`openapi`, built by openapi-request.ts).
 */
export interface RestProtocol extends RestProtocolData {
  content_type?: string;
  headers?: Record<string, string>;
  openapi?: OpenApiWire;
}

/** The REST sections of a function's input; nothing else reaches the wire. */
interface RestInput {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  header?: Record<string, unknown>;
  cookie?: Record<string, unknown>;
  body?: Record<string, unknown>;
}

export class RequestBuildError extends Error {}

export const USER_AGENT = 'patchbay';
const FORM = 'application/x-www-form-urlencoded';
const PLACEHOLDER = /\{([^{}]+)\}/g;

/** The request a REST function describes, filled from its (validated, defaulted) input. */
export function buildRestRequest(protocol: RestProtocol, input: Record<string, unknown>): OutboundRequest {
  const sections = input as RestInput;
  const server = parseServerUrl(protocol.server_url);
  const request: OutboundRequest = {
    method: protocol.method.toUpperCase(),
    origin: server.origin,
    path: server.basePath + substitutePath(protocol.path, sections.path ?? {}),
    query: server.query.length > 0 ? [...server.query] : [],
    headers: new Map(),
    cookies: new Map(),
    body: sections.body !== undefined ? { ...sections.body } : undefined,
  };
  setHeader(request, 'User-Agent', USER_AGENT);
  if (protocol.content_type) {
    setHeader(request, 'Content-Type', protocol.content_type);
  }
  for (const [name, value] of Object.entries(protocol.headers ?? {})) {
    setHeader(request, name, value);
  }
  for (const [name, value] of Object.entries(sections.header ?? {})) {
    setHeader(request, name, scalarText(value));
  }
  for (const [name, value] of Object.entries(sections.query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) {
      request.query.push([name, scalarText(item)]);
    }
  }
  for (const [name, value] of Object.entries(sections.cookie ?? {})) {
    request.cookies.set(name, scalarText(value));
  }
  return request;
}

export function setHeader(request: OutboundRequest, name: string, value: string): void {
  request.headers.set(name.toLowerCase(), [name, value]);
}

export function getHeader(request: OutboundRequest, name: string): string | undefined {
  return request.headers.get(name.toLowerCase())?.[1];
}

/** Puts one named value at a location, replacing a value of the same name there. */
export function placeValue(request: OutboundRequest, location: ParameterLocation, name: string, value: string): void {
  switch (location) {
    case 'header':
      setHeader(request, name, value);
      return;
    case 'query':
      request.query = request.query.filter(([key]) => key !== name);
      request.query.push([name, value]);
      return;
    case 'cookie':
      request.cookies.set(name, value);
      return;
    case 'body':
      request.body = { ...request.body, [name]: value };
      return;
  }
}

/** Bytes on the wire: query string, Cookie header, and a JSON or form-encoded body. */
export function serializeRequest(request: OutboundRequest): SerializedRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of request.headers.values()) {
    headers[name] = value;
  }
  if (request.cookies.size > 0 || request.encodedCookies) {
    const pieces = [...request.cookies].map(([name, value]) => `${name}=${encodeURIComponent(value)}`);
    const cookies = request.encodedCookies ? [...request.encodedCookies, ...pieces].join('; ') : pieces.join('; ');
    const given = getHeader(request, 'cookie');
    deleteHeader(headers, 'cookie');
    headers.Cookie = given ? `${given}; ${cookies}` : cookies;
  }
  let body: string | Buffer | undefined;
  if (request.payload) {
    body = request.payload.bytes;
  } else if (request.body !== undefined && Object.keys(request.body).length > 0) {
    const contentType = getHeader(request, 'content-type');
    if (contentType?.toLowerCase().startsWith(FORM)) {
      body = formEncode(request.body);
    } else {
      body = JSON.stringify(request.body);
      if (!contentType) {
        headers['Content-Type'] = 'application/json';
      }
    }
  }
  let query = request.query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  if (request.encodedQuery) {
    query = [...request.encodedQuery, ...query];
  }
  return {
    method: request.method,
    origin: request.origin,
    path: query.length > 0 ? `${request.path}?${query.join('&')}` : request.path,
    headers,
    body,
  };
}

function deleteHeader(headers: Record<string, string>, lowerName: string): void {
  for (const name of Object.keys(headers)) {
    if (name.toLowerCase() === lowerName) {
      delete headers[name];
    }
  }
}

export interface ServerUrl {
  origin: string;
  basePath: string;
  query: [string, string][];
}

/** Parsed server URLs: a catalogue has few of them, and URL parsing shows in the hot path's profile. */
const servers = new Map<string, ServerUrl>();
const MAX_SERVERS = 10_000;

export function parseServerUrl(serverUrl: string): ServerUrl {
  const known = servers.get(serverUrl);
  if (known) {
    return known;
  }
  if (servers.size >= MAX_SERVERS) {
    servers.clear();
  }
  const parsed = readServerUrl(serverUrl);
  servers.set(serverUrl, parsed);
  return parsed;
}

function readServerUrl(serverUrl: string): ServerUrl {
  let url: URL;
  try {
    url = new URL(serverUrl);
  } catch {
    throw new RequestBuildError(`the function's server_url is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RequestBuildError(`the function's server_url must be http or https`);
  }
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, ''), query: [...url.searchParams] };
}

/**
 * Replaces `{name}` with the percent-encoded value, so a value stays inside its path segment: `/`,
 * `?`, `#` and `%` are encoded, and a value made only of dots is encoded too so that it cannot act
 * as `.` or `..`. The result is sent as is, never normalised.
 */
function substitutePath(template: string, values: Record<string, unknown>): string {
  const path = template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = values[name];
    if (value === undefined || value === null) {
      throw new RequestBuildError(`the path parameter ${name} has no value`);
    }
    const text = scalarText(value);
    return /^\.+$/.test(text) ? text.replace(/\./g, '%2E') : encodeURIComponent(text);
  });
  return path.startsWith('/') || path === '' ? path : `/${path}`;
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  return JSON.stringify(value);
}

/**
 * `application/x-www-form-urlencoded`: scalars as `key=value`, arrays of scalars as repeated keys
 * (as Python's requests sends them, which the ACI catalogue assumes), nested objects and arrays of
 * objects in bracket notation (`metadata[plan]=pro`, `items[0][price]=p1`).
 */
export function formEncode(body: Record<string, unknown>): string {
  const pairs: string[] = [];
  const add = (key: string, value: unknown): void => {
    if (value === undefined || value === null) {
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (item !== null && typeof item === 'object') {
          add(`${key}[${index}]`, item);
        } else {
          add(key, item);
        }
      });
      return;
    }
    if (typeof value === 'object') {
      for (const [name, child] of Object.entries(value as Record<string, unknown>)) {
        add(`${key}[${name}]`, child);
      }
      return;
    }
    pairs.push(`${formComponent(key)}=${formComponent(scalarText(value))}`);
  };
  for (const [key, value] of Object.entries(body)) {
    add(key, value);
  }
  return pairs.join('&');
}

/** The form encoding of the URL standard: space as `+`. */
function formComponent(text: string): string {
  return encodeURIComponent(text).replace(/%20/g, '+');
}
