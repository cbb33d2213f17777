/**
 * The independent judge of bench:fidelity: express-openapi-validator, a request validator Patchbay's
 * code does not use. Chosen over openapi-backend (the first judge) because it reads parameters the way
 * the OpenAPI serialization tables write them — `simple` arrays and objects in paths and headers,
 * `form` with and without explode, `spaceDelimited`, `pipeDelimited`, `deepObject`, JSON `content`
 * parameters — and parses JSON, form and multipart bodies itself; openapi-backend splits none of
 * them, and on the fixed sample 30 of the 46 requests it rejected were its own misreadings.
 *
 * Each document gets one small Express server on 127.0.0.1 and one validator, serving its sampled
 * operations of the original document under `/f<k>/o<j>` (so memory and time grow with documents,
 * not operations); a request the recording upstream received for operation j is replayed to it byte
 * for byte under that prefix, and the validator's errors are what the request broke.
 *
 * The validator is given the original document with only these rewrites, each of which leaves what
 * the document means unchanged and works around a limit of the validator (see `forTheValidator`):
 * - header parameters named Accept, Content-Type or Authorization are removed: OpenAPI says their
 *   definitions SHALL be ignored, and the validator does not;
 * - every parameter states its `style` and `explode`, with the specification's defaults: the
 *   validator reads a missing `style` as none and then refuses the parameter;
 * - a parameter described by `content` in a media type other than JSON (`*\/*`, whose value is its
 *   text) is described by that media type's schema: the validator refuses any other media type;
 * - `nullable` is removed from schemas without a `type`: OpenAPI 3.0.3 says it has no effect there,
 *   and the validator's ajv refuses to compile it;
 * - path parameters whose names are not word characters (`{file-name}`) are renamed, in the template
 *   and the parameter alike: Express's router cannot name them;
 * - query parameters whose names hold brackets (`ids[]`, `fields[devices]`) are renamed, in the
 *   document and in the replayed query string alike: the validator reads every bracketed name as
 *   qs nesting, though the specification makes names literal;
 * - each sampled operation is served alone on its own path, `/o<j>` followed by its path without the
 *   fragment APIs.guru adds to tell operations on one path apart (`/#Action=Describe`), which is no
 *   part of the HTTP path; references into other operations (`#/paths/…`) are replaced by their targets;
 * - a request body that is not required is removed from the operation when none was sent (the same
 *   operation is also served without it, under `/o<j>n`): the validator asks for a Content-Type all
 *   the same (the harness checks that a required one is sent);
 * - a `oneOf` of primitives of types no value shares (`integer` or `string`) is read as `anyOf`: in
 *   JSON the two accept the same values, and a parameter is text on the wire, where `191` is the
 *   integer and the string alike, so the validator finds every integer in both branches (see
 *   `primitiveOneOfAsAnyOf`);
 * - a parameter that is one value or a list of them (`oneOf: [integer, array of integer]`) is given as
 *   the list: every style writes a one-item list as its item, so the texts allowed are the same, and
 *   the validator splits a value only when its schema is an array (see `singleOrList`);
 * - a header parameter whose value is an object, or JSON text (`content: application/json`), is given
 *   to the validator as a string, and checked by this oracle itself: split as the simple style writes
 *   objects (`R,100,G,200`, exploded `R=100,G=200`), texts coerced, or parsed as JSON, and validated
 *   against the parameter's schema with ajv (the validator neither splits objects in headers nor
 *   parses JSON headers; see `headerErrors`);
 * - a `pattern` that is no regular expression in unicode mode, the mode ajv compiles patterns in, is
 *   read the way its document means it (see `documentPatterns`): written for a Java or non-unicode
 *   ECMAScript engine (AWS's `\p{Graph}`, `\A…\z`, identity escapes such as `\-` or `\_`, a lone `}`),
 *   it is rewritten into the same expression in unicode mode; one that has no such rewriting is checked
 *   as ECMAScript reads it without the `u` flag, through a format that tests it (ajv's own pattern
 *   keyword cannot be given another engine through the validator's options);
 * - `readOnly` on a parameter's schema is removed: the specification makes it relevant only to
 *   properties, and the validator refuses every value of such a (required, path) parameter;
 * - references into a component (`#/components/schemas/A/properties/n`) point at a copy of their
 *   target made a component of its own: the validator resolves references to whole components only;
 * - the literal text of a path is served percent-encoded where Express's router reserves characters
 *   (`docs('{key}')`, a space), and the replayed path is encoded alike where a path may carry a
 *   character either way (`(`, `)`, `+`, `!`, `*`);
 * - form and multipart field names with brackets are renamed, in the document and the replayed body
 *   alike (the validator's parsers read `model[name]` as nesting), and fields whose text is JSON (an
 *   `encoding` that says so, or an object in a multipart part) are given to the validator as text and
 *   checked by this oracle, parsed and validated against their schemas (see `formFields`);
 * - examples, defaults and extensions are removed, and components named `id` renamed, with their references:
 *   the validator gives ajv the components inside each schema, where ajv reads an `id` as a schema
 *   identifier and fails (see `dropAnnotations`, `renameKeywordComponents`).
 * Form and multipart fields are text on the wire, so they are checked with type coercion; JSON bodies
 * (`text/json` too) without it; other bodies are read as text (a Buffer is no JSON Schema type). The
 * validator's answer is written with Node's own `end` (Express's `send` answers a request carrying
 * `If-None-Match: *` with 304 and no body), and in a header too, for HEAD requests. The recording
 * upstream and the judge accept 1 MB of request line and headers (Node's default is 16 KB; documents
 * allow long query strings).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Client } from 'undici';
import * as OpenApiValidator from 'express-openapi-validator';

import type { Recorded } from './fidelity-harness.js';
import { isNode, resolve } from './fidelity-sample.js';

type Node = Record<string, unknown>;

// ajv-formats is CommonJS: its default export is the module object.
const addFormats = addFormatsModule.default;

export interface OracleError {
  path: string;
  message: string;
  errorCode?: string;
}

/** One sampled operation of a document, as the judge serves it. */
export interface JudgedOperation {
  path: string;
  method: string;
}

/** A header parameter whose value is an object: checked by the oracle itself (see `headerErrors`). */
interface ObjectHeader {
  name: string;
  /** How the value is written: an object in the simple style, exploded or not, or JSON text (`content`). */
  style: 'simple' | 'simple-exploded' | 'json';
  validate: ValidateFunction;
}

/**
 * The judge of one document: one Express server and one validator (two: with and without type
 * coercion) serving all of the document's sampled operations, each under its own prefix, so that
 * memory and time grow with documents, not operations.
 */
export class DocumentOracle {
  private readonly client: Client;

  private constructor(
    private readonly server: Server,
    private readonly prefix: string,
    private readonly routes: RoutedOperation[],
    private readonly queryRenames: Map<string, string>,
  ) {
    this.client = new Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
      maxHeaderSize: MAX_HEADER_SIZE,
    });
  }

  /** A judge for the sampled operations of a document (its original), served under `/f<k>`. */
  static async start(document: Node, k: number, operations: JudgedOperation[]): Promise<DocumentOracle> {
    const prefix = `/f${k}`;
    const { apiSpec, routes, queryRenames, patternFormats } = forTheValidator(document, operations);
    apiSpec.servers = [{ url: prefix }];
    const app = express();
    app.set('query parser', 'extended');
    // Bodies are parsed as their media types say before the validator reads them; the rest as text.
    app.use(
      express.json({ type: ['application/json', 'application/*+json', 'text/json'], limit: '20mb', strict: false }),
    );
    app.use(express.urlencoded({ extended: true, limit: '20mb', parameterLimit: 100_000 }));
    app.use(express.text({ type: ['text/*', 'application/xml', 'application/*+xml'], limit: '20mb' }));
    app.use(
      express.text({
        // Only a body that states its media type: an empty POST (Content-Length: 0) has none to read.
        type: (req) => /^(?!multipart\/)./i.test(String(req.headers['content-type'] ?? '')),
        limit: '20mb',
      }),
    );
    const validator = (coerceTypes: boolean) =>
      express.Router().use(
        OpenApiValidator.middleware({
          apiSpec: structuredClone(apiSpec) as never,
          validateRequests: { allowUnknownQueryParameters: false, allErrors: true, coerceTypes },
          validateResponses: false,
          validateSecurity: false,
          validateApiSpec: false,
          validateFormats: true,
          ajvFormats: { mode: 'full' },
          // Formats neither ajv-formats nor OpenAPI defines (`uint32`, `iri-reference`…) accept any value,
          // as the specification says of unknown formats (and ajv stops warning about each of them).
          formats: { ...unknownFormats(apiSpec), ...patternFormats },
          fileUploader: { limits: { fileSize: 20 * 1024 * 1024 } },
        }),
      );
    const strict = validator(false);
    const coercing = validator(true);
    app.use((req: Request, res: Response, next: NextFunction) => {
      const textFields = /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(
        String(req.headers['content-type'] ?? ''),
      );
      (textFields ? coercing : strict)(req, res, next);
    });
    app.use((_req: Request, res: Response) => {
      answer(res, []);
    });
    app.use(
      (
        error: { status?: number; message?: string; errors?: OracleError[] },
        _req: Request,
        res: Response,
        _next: NextFunction,
      ) => {
        answer(
          res,
          error.errors?.length ? error.errors : [{ path: '', message: error.message ?? 'the validator failed' }],
        );
      },
    );
    // Long query strings are valid HTTP: Node's default limit on the request line and headers (16 KB) is none of the document's.
    const server = createServer({ maxHeaderSize: MAX_HEADER_SIZE }, app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new DocumentOracle(server, prefix, routes, queryRenames);
  }

  /** The validator's errors for the request received for sampled operation `j`: none when it is valid. */
  async judge(j: number, received: Recorded): Promise<OracleError[]> {
    const route = this.routes[j];
    const bodySent = received.body.length > 0;
    const rest = received.url.startsWith(this.prefix) ? received.url.slice(this.prefix.length) : received.url;
    const [restPath, restQuery] = rest.split(/\?(.*)/s);
    // Characters a path may carry as they are or percent-encoded alike, encoded as the served path has them.
    const path = restPath.replace(/[()+!*]/g, percentEncoded);
    let url = `${this.prefix}${!bodySent && route.bodylessPrefix ? route.bodylessPrefix : route.prefix}${path}`;
    url += restQuery === undefined ? '' : `?${restQuery}`;
    const [target, query] = url.split(/\?(.*)/s);
    if (query && this.queryRenames.size > 0) {
      const renamed = query.split('&').map((pair) => {
        const [key, ...value] = pair.split('=');
        const safe = this.queryRenames.get(decodeURIComponent(key.replace(/\+/g, ' ')));
        return safe === undefined ? pair : [safe, ...value].join('=');
      });
      url = `${target}?${renamed.join('&')}`;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(received.headers)) {
      if (value === undefined || ['host', 'content-length', 'connection', 'transfer-encoding'].includes(name)) {
        continue;
      }
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const body = bodySent ? renamedFields(received.body, headers['content-type'], route.fieldRenames) : undefined;
    // undici's Client sends the path as received (fetch would re-encode it through the URL parser).
    const response = await this.client.request({ path: url, method: received.method, headers, body });
    // A HEAD answer has no body: the errors come in a header as well (see `answer`).
    const text = await response.body.text();
    const errors = JSON.parse(
      received.method === 'HEAD' ? Buffer.from(String(response.headers[ERRORS_HEADER]), 'base64url').toString() : text,
    ) as OracleError[];
    return [
      ...errors,
      ...headerErrors(route.objectHeaders, headers),
      ...(body && route.jsonFields.length > 0 && FORM_MEDIA.test(headers['content-type'] ?? '')
        ? await jsonFieldErrors(route.jsonFields, body, headers)
        : []),
    ];
  }

  async close(): Promise<void> {
    await this.client.close();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

/** The body with its renamed form or multipart field names (see `formFields`). */
function renamedFields(body: Buffer, contentType: string | undefined, renames: Map<string, string>): Buffer {
  if (renames.size === 0 || !FORM_MEDIA.test(contentType ?? '')) {
    return body;
  }
  if (/^multipart\//i.test(contentType ?? '')) {
    let text = body.toString('latin1');
    for (const [name, safe] of renames) {
      text = text.split(`name="${name}"`).join(`name="${safe}"`);
    }
    return Buffer.from(text, 'latin1');
  }
  const pairs = body.toString('latin1').split('&');
  return Buffer.from(
    pairs
      .map((pair) => {
        const [key, ...value] = pair.split('=');
        const safe = renames.get(decodeURIComponent(key.replace(/\+/g, ' ')));
        return safe === undefined ? pair : [safe, ...value].join('=');
      })
      .join('&'),
    'latin1',
  );
}

/** The JSON fields of a form or multipart body, parsed and validated against their schemas. */
async function jsonFieldErrors(
  fields: JsonField[],
  body: Buffer,
  headers: Record<string, string>,
): Promise<OracleError[]> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': headers['content-type'] ?? '' } }).formData();
  } catch (error) {
    return [{ path: '/body', message: `the oracle cannot read the form: ${(error as Error).message}` }];
  }
  const errors: OracleError[] = [];
  for (const field of fields) {
    const texts = form.getAll(field.name).filter((value): value is string => typeof value === 'string');
    const values: unknown[] = [];
    for (const text of texts) {
      try {
        values.push(JSON.parse(text));
      } catch {
        errors.push({ path: `/body/${field.name}`, message: 'is no JSON text' });
      }
    }
    // One field holding the whole value, or (an array) one field per item.
    const checks: [ValidateFunction, unknown][] =
      field.items && !(values.length === 1 && Array.isArray(values[0]))
        ? values.map((value): [ValidateFunction, unknown] => [field.items as ValidateFunction, value])
        : values.map((value): [ValidateFunction, unknown] => [field.validate, value]);
    for (const [validate, value] of checks) {
      if (!validate(value)) {
        for (const error of validate.errors ?? []) {
          errors.push({ path: `/body/${field.name}${error.instancePath}`, message: error.message ?? 'invalid' });
        }
      }
    }
  }
  return errors;
}

function isObjectSchema(doc: Node, schema: unknown): boolean {
  const resolved = resolve(doc, schema);
  return isNode(resolved) && (resolved.type === 'object' || isNode(resolved.properties));
}

function percentEncoded(char: string): string {
  return [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

const FORM_MEDIA = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i;
const ERRORS_HEADER = 'x-oracle-errors';
export const MAX_HEADER_SIZE = 1024 * 1024;

/**
 * The validator's errors as the judge reads them: the body, and a header for HEAD requests, whose answers
 * have none. Written with Node's `end`, not Express's `send`, which answers a request carrying
 * `If-None-Match: *` (a header parameter like any other here) with 304 and no body.
 */
function answer(res: Response, errors: OracleError[]): void {
  const text = JSON.stringify(errors);
  res.status(200);
  res.setHeader('content-type', 'application/json');
  res.setHeader(ERRORS_HEADER, Buffer.from(JSON.stringify(errors.slice(0, 20))).toString('base64url'));
  res.end(text);
}

/**
 * The second check for header parameters whose value is an object, which the validator does not
 * split (it reads `R,100,G,200` as a string and refuses it as no object): the value is split here as
 * the simple style writes objects (`R,100,G,200`, or `R=100,G=200` exploded) and validated against the
 * parameter's schema with ajv, coercing the texts as the validator coerces other parameters.
 */
function headerErrors(objectHeaders: ObjectHeader[], headers: Record<string, string>): OracleError[] {
  const errors: OracleError[] = [];
  for (const header of objectHeaders) {
    const text = headers[header.name.toLowerCase()];
    if (text === undefined) {
      continue;
    }
    let value: unknown = {};
    const pairs: Record<string, string> = {};
    const pieces = text === '' ? [] : text.split(',');
    if (header.style === 'json') {
      try {
        value = JSON.parse(text);
      } catch {
        errors.push({ path: `/headers/${header.name}`, message: 'is no JSON text' });
        continue;
      }
    } else if (header.style === 'simple-exploded') {
      value = pairs;
      for (const piece of pieces) {
        const at = piece.indexOf('=');
        if (at < 0) {
          errors.push({ path: `/headers/${header.name}`, message: `"${piece}" is no name=value pair` });
          continue;
        }
        pairs[piece.slice(0, at)] = piece.slice(at + 1);
      }
    } else if (pieces.length % 2 !== 0) {
      errors.push({ path: `/headers/${header.name}`, message: 'an odd number of names and values' });
    } else {
      value = pairs;
      for (let i = 0; i < pieces.length; i += 2) {
        pairs[pieces[i]] = pieces[i + 1];
      }
    }
    if (!header.validate(value)) {
      for (const error of header.validate.errors ?? []) {
        errors.push({ path: `/headers/${header.name}${error.instancePath}`, message: error.message ?? 'invalid' });
      }
    }
  }
  return errors;
}

/** Where a sampled operation is served, and the object headers the oracle checks itself. */
interface RoutedOperation {
  prefix: string;
  /** The same operation without its optional body, for requests sent without one. */
  bodylessPrefix?: string;
  objectHeaders: ObjectHeader[];
  /** Form and multipart field names with brackets, renamed (see `formFields`). */
  fieldRenames: Map<string, string>;
  /** Form and multipart fields whose text is JSON, checked by the oracle (see `jsonFieldErrors`). */
  jsonFields: JsonField[];
}

/** A form or multipart field whose text is JSON: parsed and validated against its schema by the oracle. */
interface JsonField {
  name: string;
  validate: ValidateFunction;
  /** The field is an array: each part (or field) is one item, unless a single one holds the whole array. */
  items?: ValidateFunction;
}

const KNOWN_FORMATS = new Set([
  ...Object.keys(fullFormats),
  ...['int32', 'int64', 'float', 'double', 'byte', 'binary', 'password'],
]);

function unknownFormats(document: Node): Record<string, true> {
  const found: Record<string, true> = {};
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (isNode(value)) {
      if (typeof value.format === 'string' && !KNOWN_FORMATS.has(value.format)) {
        found[value.format] = true;
      }
      Object.values(value).forEach(visit);
    }
  };
  visit(document);
  return found;
}

const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

/** The document as the validator is given it: the rewrites listed at the top of this file. */
function forTheValidator(
  document: Node,
  operations: JudgedOperation[],
): {
  apiSpec: Node;
  routes: RoutedOperation[];
  queryRenames: Map<string, string>;
  patternFormats: Record<string, RegExp>;
} {
  const apiSpec = structuredClone(document);
  const patternFormats = documentPatterns(apiSpec);
  hoistDeepReferences(apiSpec);
  const source = isNode(apiSpec.paths) ? apiSpec.paths : {};
  const paths: Node = {};
  const queryRenames = new Map<string, string>();
  let headerAjv: Ajv | undefined;
  let jsonAjv: Ajv | undefined;
  const fixParameters = (list: unknown, renames: Map<string, string>, objectHeaders: ObjectHeader[]) => {
    if (!Array.isArray(list)) {
      return undefined;
    }
    return list.flatMap((entry: unknown) => {
      const parameter = structuredClone(resolve(apiSpec, entry));
      if (!isNode(parameter) || typeof parameter.name !== 'string') {
        return [entry];
      }
      if (parameter.in === 'header' && IGNORED_HEADERS.has(parameter.name.toLowerCase())) {
        return [];
      }
      const name = parameter.name;
      if (parameter.in === 'query' && /[[\]]/.test(name)) {
        const safe = queryRenames.get(name) ?? `q${queryRenames.size}_${name.replace(/\W/g, '_')}`;
        queryRenames.set(name, safe);
        parameter.name = safe;
      }
      if (parameter.in === 'path' && renames.has(name)) {
        parameter.name = renames.get(name);
      }
      const contentTypes = isNode(parameter.content) ? Object.keys(parameter.content) : [];
      if (contentTypes.length === 1 && !/json/i.test(contentTypes[0])) {
        // Not JSON: the value is sent as its text, which is what a schema with the simple or form style reads.
        parameter.schema = (parameter.content as Node)[contentTypes[0]];
        parameter.schema = isNode(parameter.schema) ? parameter.schema.schema : undefined;
        delete parameter.content;
      }
      if (parameter.content) {
        const media = (parameter.content as Node)[contentTypes[0]];
        if (parameter.in === 'header' && isNode(media)) {
          // A JSON header value: the validator does not parse it, this oracle does (`headerErrors`).
          jsonAjv ??= newHeaderAjv(apiSpec, false, patternFormats);
          objectHeaders.push({
            name,
            style: 'json',
            validate: compiled(jsonAjv, media.schema ?? {}),
          });
          delete parameter.content;
          parameter.schema = { type: 'string' };
        }
        return [parameter];
      }
      parameter.style ??= parameter.in === 'query' || parameter.in === 'cookie' ? 'form' : 'simple';
      parameter.explode ??= parameter.style === 'form';
      let schema = resolve(apiSpec, parameter.schema);
      if (isNode(schema) && schema.readOnly === true) {
        // `readOnly` is relevant only to properties (OpenAPI 3.0.3, Schema Object): on a parameter it means nothing.
        const { readOnly: _ignored, ...rest } = schema;
        schema = parameter.schema = rest;
      }
      if (parameter.in === 'header' && isNode(schema) && (schema.type === 'object' || isNode(schema.properties))) {
        headerAjv ??= newHeaderAjv(apiSpec, true, patternFormats);
        objectHeaders.push({
          name,
          style: parameter.explode === true ? 'simple-exploded' : 'simple',
          validate: compiled(headerAjv, parameter.schema),
        });
        parameter.schema = { type: 'string' };
      } else if (singleOrList(apiSpec, schema)) {
        parameter.schema = singleOrList(apiSpec, schema);
      }
      return [parameter];
    });
  };
  /**
   * A form or multipart body as the validator is given it: field names with brackets renamed (its
   * parsers read `model[name]` as nesting, though a property's name is literal), and fields whose text
   * is JSON (an `encoding` that says so, or an object in a multipart part, OpenAPI's default) given as
   * text, and checked by the oracle itself (the validator parses no JSON inside forms).
   */
  const formFields = (requestBody: unknown, route: RoutedOperation): unknown => {
    const body = structuredClone(resolve(apiSpec, requestBody));
    if (!isNode(body) || !isNode(body.content)) {
      return requestBody;
    }
    for (const [mediaType, media] of Object.entries(body.content)) {
      const multipart = /^multipart\/form-data/i.test(mediaType);
      const schema = isNode(media) ? structuredClone(resolve(apiSpec, media.schema)) : undefined;
      if (!isNode(media) || !isNode(schema) || !isNode(schema.properties)) {
        continue;
      }
      if (!multipart && !/^application\/x-www-form-urlencoded/i.test(mediaType)) {
        continue;
      }
      const encoding = isNode(media.encoding) ? media.encoding : {};
      const properties: Node = {};
      for (const [name, property] of Object.entries(schema.properties)) {
        let safe = name;
        if (/[[\]]/.test(name)) {
          safe = route.fieldRenames.get(name) ?? `b${route.fieldRenames.size}_${name.replace(/\W/g, '_')}`;
          route.fieldRenames.set(name, safe);
        }
        const declared = resolve(apiSpec, property);
        const stated = isNode(encoding[name]) ? encoding[name].contentType : undefined;
        const list = isNode(declared) && declared.type === 'array';
        const json =
          typeof stated === 'string'
            ? /json/i.test(stated)
            : multipart && (isObjectSchema(apiSpec, declared) || (list && isObjectSchema(apiSpec, declared.items)));
        if (json && isNode(declared)) {
          jsonAjv ??= newHeaderAjv(apiSpec, false, patternFormats);
          route.jsonFields.push({
            name: safe,
            validate: compiled(jsonAjv, property),
            items: list ? compiled(jsonAjv, declared.items ?? {}) : undefined,
          });
          properties[safe] = list ? { type: 'array', items: { type: 'string' } } : { type: 'string' };
        } else {
          properties[safe] = property;
        }
      }
      schema.properties = properties;
      if (Array.isArray(schema.required)) {
        schema.required = schema.required.map((name: unknown) => route.fieldRenames.get(String(name)) ?? name);
      }
      if (isNode(media.encoding)) {
        media.encoding = Object.fromEntries(
          Object.entries(media.encoding).map(([name, rule]) => [route.fieldRenames.get(name) ?? name, rule]),
        );
      }
      media.schema = schema;
    }
    return body;
  };
  const routes = operations.map(({ path, method }, j): RoutedOperation => {
    const item = inlinedPathReferences(apiSpec, source[path]);
    const op = isNode(item[method]) ? item[method] : {};
    // The operation's path without the fragment APIs.guru adds, and with names Express can route.
    const renames = new Map<string, string>();
    const template = path
      .replace(/#.*$/s, '')
      .split(/(\{[^}]+\})/)
      .map((part, i) => {
        if (i % 2 === 0) {
          // Literal text as it goes on the wire (`docs('…')`, a space): Express's router reserves `(`, `*`, `+`…
          return part.replace(/[^\w\-.~:@/%$&',;=]/g, percentEncoded);
        }
        const name = part.slice(1, -1);
        if (/^\w+$/.test(name)) {
          return part;
        }
        const safe = `p${renames.size}_${name.replace(/\W/g, '_')}`;
        renames.set(name, safe);
        return `{${safe}}`;
      })
      .join('');
    const objectHeaders: ObjectHeader[] = [];
    const shared = fixParameters(item.parameters, renames, objectHeaders);
    const own = fixParameters(op.parameters, renames, objectHeaders);
    const route: RoutedOperation = { prefix: `/o${j}`, objectHeaders, fieldRenames: new Map(), jsonFields: [] };
    const served: Node = {
      ...op,
      ...(own ? { parameters: own } : {}),
      ...(op.requestBody === undefined ? {} : { requestBody: formFields(op.requestBody, route) }),
    };
    const pathItem = (operation: Node): Node => ({ ...(shared ? { parameters: shared } : {}), [method]: operation });
    paths[`${route.prefix}${template}`] = pathItem(served);
    const declared = resolve(apiSpec, op.requestBody);
    if (op.requestBody !== undefined && !(isNode(declared) && declared.required === true)) {
      // Without a body the validator asks for a Content-Type all the same; a body that is not required
      // may be left out (the harness checks that a required one is sent).
      route.bodylessPrefix = `/o${j}n`;
      const { requestBody: _left, ...bodyless } = served;
      paths[`${route.bodylessPrefix}${template}`] = pathItem(bodyless);
    }
    return route;
  });
  apiSpec.paths = paths;
  dropUntypedNullable(apiSpec);
  dropAnnotations(apiSpec, '');
  renameKeywordComponents(apiSpec);
  primitiveOneOfAsAnyOf(apiSpec);
  return { apiSpec, routes, queryRenames, patternFormats };
}

/** A path item whose references into other operations (`#/paths/…`) are replaced by what they point at. */
function inlinedPathReferences(doc: Node, item: unknown): Node {
  const visit = (value: unknown, depth: number): unknown => {
    if (Array.isArray(value)) {
      return value.map((entry) => visit(entry, depth));
    }
    if (!isNode(value)) {
      return value;
    }
    if (typeof value.$ref === 'string' && value.$ref.startsWith('#/paths/') && depth < 10) {
      return visit(resolve(doc, value), depth + 1);
    }
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, visit(child, depth)]));
  };
  const copy = visit(item, 0);
  return isNode(copy) ? copy : {};
}

/** Where the header checks find the document's components: references are resolved against it. */
const DOCUMENT_ID = 'document';

/** A schema's local references (`#/components/…`) pointed at the document added to the ajv (not followed). */
function documentReferences(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(documentReferences);
  }
  if (!isNode(value)) {
    return value;
  }
  if (typeof value.$ref === 'string' && value.$ref.startsWith('#/')) {
    return { ...value, $ref: `${DOCUMENT_ID}${value.$ref}` };
  }
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, documentReferences(child)]));
}

/** A header's schema compiled; a schema ajv cannot compile gives that as the header's error. */
function compiled(ajv: Ajv, schema: unknown): ValidateFunction {
  try {
    return ajv.compile(documentReferences(schema) as Node);
  } catch (error) {
    const message = `the oracle cannot compile the header's schema: ${(error as Error).message.slice(0, 80)}`;
    const failed = (() => false) as unknown as ValidateFunction;
    failed.errors = [{ instancePath: '', schemaPath: '', keyword: 'compile', params: {}, message }];
    return failed;
  }
}

/**
 * A parameter that is one value or a list of such values (`oneOf: [T, array of T]`) read as the list:
 * every style writes a one-item list as its item (`498` is both the integer and `[498]`), so the texts
 * the document allows are those of the list, and the validator, which splits a value only when its
 * schema is an array, reads them as the document means.
 */
function singleOrList(doc: Node, schema: unknown): Node | undefined {
  const choice = isNode(schema) ? (schema.oneOf ?? schema.anyOf) : undefined;
  if (!Array.isArray(choice) || choice.length !== 2) {
    return undefined;
  }
  const [first, second] = choice.map((branch) => resolve(doc, branch));
  const list =
    isNode(first) && first.type === 'array' ? first : isNode(second) && second.type === 'array' ? second : undefined;
  const single = list === first ? second : first;
  const item = list ? resolve(doc, list.items) : undefined;
  if (!list || !isNode(single) || !isNode(item) || typeof single.type !== 'string' || single.type !== item.type) {
    return undefined;
  }
  return list;
}

const PRIMITIVE_TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/**
 * A `oneOf` of primitives of types no value shares (`integer` or `string`; not `integer` or `number`).
 * In JSON such branches never overlap, so `oneOf` and `anyOf` accept the same values there.
 */
function isPrimitiveOneOf(doc: Node, schema: Node): boolean {
  if (!Array.isArray(schema.oneOf) || schema.oneOf.length < 2) {
    return false;
  }
  const types = schema.oneOf.map((branch) => {
    const resolved = resolve(doc, branch);
    return isNode(resolved) && typeof resolved.type === 'string' && PRIMITIVE_TYPES.has(resolved.type)
      ? resolved.type
      : undefined;
  });
  return (
    types.every((type) => type !== undefined) &&
    new Set(types).size === types.length &&
    !(types.includes('integer') && types.includes('number'))
  );
}

/**
 * Every `oneOf` of primitives of types no value shares read as `anyOf`, in the whole document: in a
 * JSON body both accept the same values; in a parameter, text on the wire, `191` is the text of the
 * integer and of the string alike, so the validator (which coerces texts) finds it in both branches,
 * though the document means one of the types.
 */
function primitiveOneOfAsAnyOf(doc: Node): void {
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (isNode(value)) {
      if (isPrimitiveOneOf(doc, value)) {
        value.anyOf = value.oneOf;
        delete value.oneOf;
      }
      Object.values(value).forEach(visit);
    }
  };
  visit(doc);
}

/**
 * The ajv that checks object headers (formats as the validator checks them, unknown ones accepted):
 * texts coerced for the simple style, JSON values as they are.
 */
function newHeaderAjv(document: Node, coerceTypes: boolean, patternFormats: Record<string, RegExp>): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes, logger: false });
  addFormats(ajv, { mode: 'full' });
  for (const format of Object.keys(unknownFormats(document))) {
    ajv.addFormat(format, true);
  }
  for (const [format, pattern] of Object.entries(patternFormats)) {
    ajv.addFormat(format, pattern);
  }
  // The components, as the document has them: header schemas' references are resolved here.
  ajv.addSchema({ components: structuredClone(document.components ?? {}) }, DOCUMENT_ID);
  return ajv;
}

/** Keys whose value is a map of names (a property, a schema, a media type called `example` is kept). */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  'paths',
  'schemas',
  'parameters',
  'responses',
  'requestBodies',
  'headers',
  'securitySchemes',
  'links',
  'callbacks',
  'content',
  'encoding',
  'variables',
  'mapping',
  'definitions',
]);

/**
 * Examples, defaults and extensions (`example`, `examples`, `default`, `x-…`) removed: they constrain
 * nothing, and the validator hands the document's components to ajv as part of each schema, where ajv
 * reads an `id` inside an example as a schema identifier ("reference resolves to more than one schema");
 * the validator's ajv also writes defaults into the request it checks (`useDefaults`, not an option), then
 * judges them: Xero's read-only `HasAttachments` with its default `"false"`, a string, made every request
 * naming a bank account invalid, though none sent it.
 */
function dropAnnotations(value: unknown, parentKey: string): void {
  if (Array.isArray(value)) {
    value.forEach((entry) => dropAnnotations(entry, ''));
  } else if (isNode(value)) {
    const isMap = NAME_MAPS.has(parentKey);
    for (const key of Object.keys(value)) {
      if (!isMap && (key === 'example' || key === 'examples' || key === 'default' || key.startsWith('x-'))) {
        delete value[key];
      } else {
        dropAnnotations(value[key], isMap ? '' : key);
      }
    }
  }
}

/**
 * Components named `id` or `$id` renamed (`id` → `id_component`), with the references to them: ajv
 * walks the components as part of each schema and reads such a name as a schema identifier, then
 * fails on the object it holds (`id.replace is not a function`). A component's name means nothing
 * to a request.
 */
function renameKeywordComponents(document: Node): void {
  const components = isNode(document.components) ? document.components : {};
  const renamed = new Map<string, string>();
  for (const [section, group] of Object.entries(components)) {
    if (!isNode(group)) {
      continue;
    }
    for (const name of ['id', '$id']) {
      if (name in group) {
        const safe = `${name.replace('$', '')}_component`;
        group[safe] = group[name];
        delete group[name];
        renamed.set(`#/components/${section}/${name}`, `#/components/${section}/${safe}`);
      }
    }
  }
  if (renamed.size === 0) {
    return;
  }
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (isNode(value)) {
      if (typeof value.$ref === 'string' && renamed.has(value.$ref)) {
        value.$ref = renamed.get(value.$ref);
      }
      Object.values(value).forEach(visit);
    }
  };
  visit(document);
}

function dropUntypedNullable(value: unknown): void {
  if (Array.isArray(value)) {
    value.forEach(dropUntypedNullable);
  } else if (isNode(value)) {
    if (typeof value.nullable === 'boolean' && !('type' in value)) {
      delete value.nullable;
    }
    Object.values(value).forEach(dropUntypedNullable);
  }
}

/** Java's POSIX classes (`\p{Graph}`…), which AWS's documents use, as ECMAScript class contents (US-ASCII, as Java reads them). */
const JAVA_CLASSES: Record<string, string> = {
  Lower: 'a-z',
  Upper: 'A-Z',
  ASCII: '\\x00-\\x7F',
  Alpha: 'A-Za-z',
  Digit: '0-9',
  Alnum: 'A-Za-z0-9',
  Punct: '!-\\/:-@\\[-`{-~',
  Graph: '!-~',
  Print: ' -~',
  Blank: ' \\t',
  Cntrl: '\\x00-\\x1F\\x7F',
  XDigit: '0-9A-Fa-f',
  Space: ' \\t\\n\\x0B\\f\\r',
  all: '\\s\\S',
};

/** Escapes that mean the same in unicode mode (classes, controls, numbers, properties, back references). */
const UNICODE_ESCAPES = /[dDwWsSbBfnrtv0-9xuckpP]/;
const SYNTAX = /[\^$\\.*+?()[\]{}|/]/;

/**
 * A pattern written for a Java or non-unicode ECMAScript engine in the same expression for unicode mode:
 * Java's POSIX classes, class intersections and `\A`, `\z`, `\Z` anchors; slashes around an anchored
 * pattern, as an ECMAScript literal writes it; escapes of characters that need none (`\-`, `\_`, `\:`),
 * which both engines read as the character; a `{` or `}` that begins no quantifier, and a `]` outside a
 * class, which both read as themselves. Anything else is left for unicode mode to judge.
 */
function unicodePattern(written: string): string {
  // Written as an ECMAScript literal (`/^\d{4}…$/`): anchors inside slashes match nothing, so the slashes are delimiters.
  const literal = /^\/(\^.*\$)\/$/s.exec(written);
  // Java's class intersection `[X&&[Y]]`: a character of X that is also of Y.
  const source = (literal ? literal[1] : written).replace(/\[([^[\]]*)&&\[([^[\]]*)\]\]/g, '(?:(?=[$2])[$1])');
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i += 1) {
    const char = source[i];
    if (char === '\\' && i + 1 < source.length) {
      const next = source[i + 1];
      const property = /^[pP]\{(\w+)\}/.exec(source.slice(i + 1));
      if (property && property[1] in JAVA_CLASSES) {
        const content = JAVA_CLASSES[property[1]];
        const negated = next === 'P';
        out += inClass ? content : `[${negated ? '^' : ''}${content}]`;
        i += property[0].length;
      } else if (!inClass && (next === 'A' || next === 'z' || next === 'Z')) {
        out += next === 'A' ? '^' : '$';
        i += 1;
      } else if (SYNTAX.test(next) || UNICODE_ESCAPES.test(next) || (inClass && next === '-')) {
        out += char + next;
        i += 1;
      } else {
        // An identity escape: the character itself (a `-` in a class keeps its escape, handled above).
        out += next;
        i += 1;
      }
    } else if (inClass) {
      inClass = char !== ']';
      out += char;
    } else if (char === '[') {
      inClass = true;
      out += char;
      // A `]` or `^]` right after the opening bracket is a member in Java, nothing in ECMAScript: left as is.
    } else if (char === '{') {
      const quantifier = /^\{\d+(,\d*)?\}/.exec(source.slice(i));
      if (quantifier && out !== '') {
        out += quantifier[0];
        i += quantifier[0].length - 1;
      } else {
        out += '\\{';
      }
    } else if (char === '}' || char === ']') {
      out += `\\${char}`;
    } else {
      out += char;
    }
  }
  return out;
}

function compiles(source: string, flags: string): boolean {
  try {
    new RegExp(source, flags);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every `pattern` of the document that ajv cannot compile in unicode mode, read as its document means it:
 * rewritten into unicode mode (`unicodePattern`), or else checked without the `u` flag through a format of
 * the validator (returned, by name), which the schema gets in an `allOf` beside its own `format`.
 * A pattern no ECMAScript mode reads is left as it is, and the validator fails on the document, visibly.
 */
function documentPatterns(document: Node): Record<string, RegExp> {
  const formats: Record<string, RegExp> = {};
  const visit = (value: unknown, key: string): void => {
    if (Array.isArray(value)) {
      value.forEach((entry) => visit(entry, ''));
      return;
    }
    if (!isNode(value) || key === 'example' || key === 'examples' || key === 'default' || key === 'enum') {
      return;
    }
    if (typeof value.pattern === 'string' && !compiles(value.pattern, 'u')) {
      const rewritten = unicodePattern(value.pattern);
      if (compiles(rewritten, 'u')) {
        value.pattern = rewritten;
      } else if (compiles(value.pattern, '')) {
        const name = `pattern without the u flag: ${value.pattern}`;
        formats[name] = new RegExp(value.pattern);
        value.allOf = [...(Array.isArray(value.allOf) ? (value.allOf as unknown[]) : []), { format: name }];
        delete value.pattern;
      }
    }
    for (const [childKey, child] of Object.entries(value)) {
      visit(child, childKey);
    }
  };
  visit(document, '');
  return formats;
}

/**
 * References into a component (`#/components/schemas/A/properties/n`, `…/A/definitions/x`) pointed at a copy
 * of their target, made a component of its own: the validator's ajv resolves a reference only to a whole
 * component ("can't resolve reference … from id #/components/schemas/A"). The copy is the same schema.
 */
function hoistDeepReferences(document: Node): void {
  if (!isNode(document.components)) {
    return;
  }
  const components = document.components;
  const schemas = (components.schemas = isNode(components.schemas) ? components.schemas : {});
  const hoisted = new Map<string, string>();
  const visit = (value: unknown, parentKey = ''): void => {
    if (Array.isArray(value)) {
      value.forEach((entry) => visit(entry));
      return;
    }
    if (!isNode(value)) {
      return;
    }
    // Examples are no schemas (and are removed later: see `dropAnnotations`).
    const isMap = NAME_MAPS.has(parentKey);
    if (typeof value.$ref === 'string' && /^#\/components\/(?!examples\/)[^/]+\/[^/]+\/./.test(value.$ref)) {
      let name = hoisted.get(value.$ref);
      if (name === undefined) {
        name = `hoisted_${hoisted.size}`;
        hoisted.set(value.$ref, name);
        const target = structuredClone(resolve(document, { $ref: value.$ref }));
        schemas[name] = target;
        visit(target);
      }
      value.$ref = `#/components/schemas/${name}`;
    }
    for (const [key, child] of Object.entries(value)) {
      if (isMap || (key !== 'example' && key !== 'examples')) {
        visit(child, isMap ? '' : key);
      }
    }
  };
  visit(document);
}
