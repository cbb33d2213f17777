/**
 * The independent judge of bench:fidelity: express-openapi-validator, a request validator Patchbay's
 * code does not use. Chosen over openapi-backend (the first judge) because it reads parameters the way
 * the OpenAPI serialization tables write them — `simple` arrays and objects in paths and headers,
 * `form` with and without explode, `spaceDelimited`, `pipeDelimited`, `deepObject`, JSON `content`
 * parameters — and parses JSON, form and multipart bodies itself; openapi-backend splits none of
 * them, and on the fixed sample 30 of the 46 requests it rejected were its own misreadings.
 *
 * Each document gets a small Express server on 127.0.0.1 serving its original operations under
 * `/f<k>`; a request the recording upstream received is replayed to it byte for byte, and the
 * validator's errors are what the request broke.
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
 * - the operation's path loses the fragment APIs.guru adds to tell operations on one path apart
 *   (`/#Action=Describe`), which is no part of the HTTP path (so one validator serves one operation);
 * - a request body that is not required is removed from the operation when none was sent: the
 *   validator asks for a Content-Type all the same (the harness checks that a required one is sent).
 * Form and multipart fields are text on the wire, so they are checked with type coercion; JSON bodies
 * without it; other bodies are read as text (a Buffer is no JSON Schema type).
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Client } from 'undici';
import * as OpenApiValidator from 'express-openapi-validator';

import type { Recorded } from './fidelity-harness.js';
import { isNode, resolve } from './fidelity-sample.js';

type Node = Record<string, unknown>;

export interface OracleError {
  path: string;
  message: string;
  errorCode?: string;
}

export class ExpressOracle {
  private readonly client: Client;

  private constructor(
    private readonly server: Server,
    private readonly prefix: string,
    private readonly queryRenames: Map<string, string>,
  ) {
    this.client = new Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** A judge for one operation of a document (its original), served under `/f<k>`. */
  static async start(
    document: Node,
    k: number,
    path: string,
    method: string,
    bodySent: boolean,
  ): Promise<ExpressOracle> {
    const prefix = `/f${k}`;
    const { apiSpec, queryRenames } = forTheValidator(document, path, method, bodySent);
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
    return new ExpressOracle(server, prefix, queryRenames);
  }

  /** The validator's errors for one received request: none when it is valid. */
  async judge(received: Recorded): Promise<OracleError[]> {
    let url = received.url.startsWith(this.prefix) ? received.url : `${this.prefix}${received.url}`;
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
      body: received.body.length > 0 ? received.body : undefined,
    });
    const answer = (await response.body.json()) as { errors: OracleError[] };
    return answer.errors;
  }

  async close(): Promise<void> {
    await this.client.close();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
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
  onlyPath: string,
  onlyMethod: string,
  bodySent: boolean,
): { apiSpec: Node; queryRenames: Map<string, string> } {
  const apiSpec = structuredClone(document);
  const paths = isNode(apiSpec.paths) ? apiSpec.paths : {};
  const httpPath = onlyPath.replace(/#.*$/s, '');
  if (httpPath !== onlyPath) {
    // The operation's path without its fragment; other paths that become the same one are left out.
    for (const other of Object.keys(paths)) {
      if (other !== onlyPath && other.replace(/#.*$/s, '') === httpPath) {
        delete paths[other];
      }
    }
    paths[httpPath] = paths[onlyPath];
    delete paths[onlyPath];
  }
  const operation = (paths[httpPath] as Node)[onlyMethod] as Node;
  if (!bodySent) {
    // Without a body the validator asks for a Content-Type all the same; a body that is not required
    // may be left out, and the harness checks that a required one is sent.
    const declared = resolve(apiSpec, operation.requestBody);
    if (!(isNode(declared) && declared.required === true)) {
      delete operation.requestBody;
    }
  }
  const queryRenames = new Map<string, string>();
  const fixParameters = (owner: Node, renames: Map<string, string>) => {
    if (!Array.isArray(owner.parameters)) {
      return;
    }
    owner.parameters = owner.parameters.flatMap((entry: unknown) => {
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
      if (!parameter.content) {
        parameter.style ??= parameter.in === 'query' || parameter.in === 'cookie' ? 'form' : 'simple';
        parameter.explode ??= parameter.style === 'form';
      }
      return [parameter];
    });
  };
  for (const [template, item] of Object.entries(paths)) {
    if (!isNode(item)) {
      continue;
    }
    const renames = new Map<string, string>();
    const renamed = template.replace(/\{([^}]+)\}/g, (whole, name: string) => {
      if (/^\w+$/.test(name)) {
        return whole;
      }
      const safe = `p${renames.size}_${name.replace(/\W/g, '_')}`;
      renames.set(name, safe);
      return `{${safe}}`;
    });
    fixParameters(item, renames);
    for (const operation of Object.values(item)) {
      if (isNode(operation)) {
        fixParameters(operation, renames);
      }
    }
    if (renamed !== template) {
      delete paths[template];
      paths[renamed] = item;
    }
  }
  dropUntypedNullable(apiSpec);
  return { apiSpec, queryRenames };
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
