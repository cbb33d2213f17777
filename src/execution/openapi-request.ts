import { type OpenApiWire, resolveServer } from '../functions/openapi-wire.js';
import { encodeBody, isJson } from './openapi-body.js';
import { cookiePieces, headerValue, InexpressibleInputError, pathValue, queryPieces } from './parameter-styles.js';
import { type OutboundRequest, parseServerUrl, type RestProtocol, setHeader, USER_AGENT } from './rest-request.js';

/** A REST function imported from an OpenAPI document: its protocol data carries the document's wire rules. */
export type OpenApiProtocol = RestProtocol & { openapi: OpenApiWire };

type Json = Record<string, unknown>;

const PLACEHOLDER = /\{([^{}]+)\}/g;
/** What RFC 3986 does not allow in a path (`pchar`, `/`, and `%` of an escape). */
const NOT_IN_PATH = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]|%(?![0-9A-Fa-f]{2})/gu;

/**
 * The request of an imported operation, serialized as its document says: every parameter in its
 * style, the body in the media type chosen at import (no body, no Content-Type). An input the style
 * cannot express throws InexpressibleInputError, before anything is sent.
 */
export function buildOpenApiRequest(protocol: OpenApiProtocol, input: Json): OutboundRequest {
  const rules = protocol.openapi.parameters ?? {};
  const server = parseServerUrl(protocol.server_url);
  const pathInput = (input.path ?? {}) as Json;
  // The template's own text goes on the wire as a path may carry it: a space or a `[` percent-encoded.
  const template = protocol.path
    .split(/(\{[^{}]+\})/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(NOT_IN_PATH, (char) => encodeURIComponent(char))))
    .join('');
  const path = template.replace(PLACEHOLDER, (_match, name: string) => {
    const field = `function_input.path.${name}`;
    const value = pathInput[name];
    if (value === undefined || value === null || isEmpty(value)) {
      throw new InexpressibleInputError(field, 'a path parameter must not be empty');
    }
    const text = pathValue(name, value, rules.path?.[name], field);
    // A segment made only of dots would act as `.` or `..`: encoded, it stays a value.
    return /^\.+$/.test(text) ? text.replace(/\./g, '%2E') : text;
  });
  const request: OutboundRequest = {
    method: protocol.method.toUpperCase(),
    origin: server.origin,
    path: server.basePath + (path.startsWith('/') || path === '' ? path : `/${path}`),
    query: server.query.length > 0 ? [...server.query] : [],
    headers: new Map(),
    cookies: new Map(),
    body: undefined,
  };
  setHeader(request, 'User-Agent', USER_AGENT);
  for (const [name, value] of Object.entries(protocol.headers ?? {})) {
    setHeader(request, name, value);
  }
  for (const [name, value] of entries(input.header)) {
    setHeader(request, name, headerValue(value, rules.header?.[name], `function_input.header.${name}`));
  }
  const query: string[] = [];
  for (const [name, value] of entries(input.query)) {
    query.push(...queryPieces(name, value, rules.query?.[name], `function_input.query.${name}`));
  }
  if (query.length > 0) {
    request.encodedQuery = query;
  }
  const cookies: string[] = [];
  for (const [name, value] of entries(input.cookie)) {
    cookies.push(...cookiePieces(name, value, rules.cookie?.[name], `function_input.cookie.${name}`));
  }
  if (cookies.length > 0) {
    request.encodedCookies = cookies;
  }
  const bodyRule = protocol.openapi.body;
  if (bodyRule && input.body !== undefined) {
    const payload = encodeBody(bodyRule, input.body);
    // A form without fields is no body (APIs such as Stripe's declare optional form bodies on GET).
    if (payload.bytes.length > 0 || isJson(bodyRule.media_type)) {
      request.payload = payload;
      setHeader(request, 'Content-Type', payload.contentType);
    }
  }
  return request;
}

/**
 * The protocol with its server URL built from the app configuration's server variables, when its server
 * has variables and the configuration gives values; as it is otherwise. A value the server's `enum` does
 * not allow throws ServerVariableError.
 */
export function withServerVariables(
  protocol: OpenApiProtocol,
  values: Record<string, string> | undefined,
): OpenApiProtocol {
  const template = protocol.openapi.server;
  if (template === undefined || values === undefined) {
    return protocol;
  }
  for (const name in values) {
    if (name in template.variables) {
      return { ...protocol, server_url: resolveServer(template, values) };
    }
  }
  return protocol;
}

function entries(section: unknown): [string, unknown][] {
  return typeof section === 'object' && section !== null
    ? Object.entries(section as Json).filter(([, value]) => value !== undefined)
    : [];
}

function isEmpty(value: unknown): boolean {
  if (typeof value === 'string' || Array.isArray(value)) {
    return value.length === 0;
  }
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}
