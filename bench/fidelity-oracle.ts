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
 * - examples and extensions are removed, and components named `id` renamed, with their references:
 *   the validator gives ajv the components inside each schema, where ajv reads an `id` as a schema
 *   identifier and fails (see `dropAnnotations`, `renameKeywordComponents`).
 * Form and multipart fields are text on the wire, so they are checked with type coercion; JSON bodies
 * without it; other bodies are read as text (a Buffer is no JSON Schema type).
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
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
    this.client = new Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** A judge for the sampled operations of a document (its original), served under `/f<k>`. */
  static async start(document: Node, k: number, operations: JudgedOperation[]): Promise<DocumentOracle> {
    const prefix = `/f${k}`;
    const { apiSpec, routes, queryRenames } = forTheValidator(document, operations);
    apiSpec.servers = [{ url: prefix }];
    const app = express();
    app.set('query parser', 'extended');
    // Bodies are parsed as their media types say before the validator reads them; the rest as text.
    app.use(express.json({ type: ['application/json', 'application/*+json'], limit: '20mb', strict: false }));
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
          formats: unknownFormats(apiSpec),
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
      res.json({ errors: [] });
    });
    app.use(
      (
        error: { status?: number; message?: string; errors?: OracleError[] },
        _req: Request,
        res: Response,
        _next: NextFunction,
      ) => {
        res.status(200).json({
          errors: error.errors?.length
            ? error.errors
            : [{ path: '', message: error.message ?? 'the validator failed' }],
        });
      },
    );
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new DocumentOracle(server, prefix, routes, queryRenames);
  }

  /** The validator's errors for the request received for sampled operation `j`: none when it is valid. */
  async judge(j: number, received: Recorded): Promise<OracleError[]> {
    const route = this.routes[j];
    const bodySent = received.body.length > 0;
    const rest = received.url.startsWith(this.prefix) ? received.url.slice(this.prefix.length) : received.url;
    let url = `${this.prefix}${!bodySent && route.bodylessPrefix ? route.bodylessPrefix : route.prefix}${rest}`;
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
    // undici's Client sends the path as received (fetch would re-encode it through the URL parser).
    const response = await this.client.request({
      path: url,
      method: received.method,
      headers,
      body: bodySent ? received.body : undefined,
    });
    const answer = (await response.body.json()) as { errors: OracleError[] };
    return [...answer.errors, ...headerErrors(route.objectHeaders, headers)];
  }

  async close(): Promise<void> {
    await this.client.close();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
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
): { apiSpec: Node; routes: RoutedOperation[]; queryRenames: Map<string, string> } {
  const apiSpec = structuredClone(document);
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
          jsonAjv ??= newHeaderAjv(apiSpec, false);
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
      const schema = resolve(apiSpec, parameter.schema);
      if (parameter.in === 'header' && isNode(schema) && (schema.type === 'object' || isNode(schema.properties))) {
        headerAjv ??= newHeaderAjv(apiSpec, true);
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
  const routes = operations.map(({ path, method }, j): RoutedOperation => {
    const item = inlinedPathReferences(apiSpec, source[path]);
    const op = isNode(item[method]) ? item[method] : {};
    // The operation's path without the fragment APIs.guru adds, and with names Express can route.
    const renames = new Map<string, string>();
    const template = path.replace(/#.*$/s, '').replace(/\{([^}]+)\}/g, (whole, name: string) => {
      if (/^\w+$/.test(name)) {
        return whole;
      }
      const safe = `p${renames.size}_${name.replace(/\W/g, '_')}`;
      renames.set(name, safe);
      return `{${safe}}`;
    });
    const objectHeaders: ObjectHeader[] = [];
    const shared = fixParameters(item.parameters, renames, objectHeaders);
    const own = fixParameters(op.parameters, renames, objectHeaders);
    const served: Node = { ...op, ...(own ? { parameters: own } : {}) };
    const pathItem = (operation: Node): Node => ({ ...(shared ? { parameters: shared } : {}), [method]: operation });
    const route: RoutedOperation = { prefix: `/o${j}`, objectHeaders };
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
  return { apiSpec, routes, queryRenames };
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
function newHeaderAjv(document: Node, coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes, logger: false });
  addFormats(ajv, { mode: 'full' });
  for (const format of Object.keys(unknownFormats(document))) {
    ajv.addFormat(format, true);
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
 * Examples and extensions (`example`, `examples`, `x-…`) removed: they constrain nothing, and the
 * validator hands the document's components to ajv as part of each schema, where ajv reads an `id`
 * inside an example as a schema identifier ("reference resolves to more than one schema").
 */
function dropAnnotations(value: unknown, parentKey: string): void {
  if (Array.isArray(value)) {
    value.forEach((entry) => dropAnnotations(entry, ''));
  } else if (isNode(value)) {
    const isMap = NAME_MAPS.has(parentKey);
    for (const key of Object.keys(value)) {
      if (!isMap && (key === 'example' || key === 'examples' || key.startsWith('x-'))) {
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
