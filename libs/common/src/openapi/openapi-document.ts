import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, getSchemaPath, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { stableJson } from '../json/stable-json.js';
import type { InputLimits } from '../validation/input-limits.js';
import { ErrorResponse, HTTPValidationError } from './error-responses.js';

export interface OpenApiInfo {
  title: string;
  description: string;
  version: string;
  apiKeyHeader: string;
  /** What the HTTP layer refuses for every route, declared on every operation it applies to. */
  limits: RequestLimits;
}

export interface RequestLimits {
  bodyLimitBytes: number;
  /** Node's limit on the request line and headers (`http.maxHeaderSize`), past which it answers 431. */
  maxHeaderBytes: number;
  pathParamMaxLength: number;
  input: InputLimits;
}

/** Builds the document and sorts every object's keys so that the committed file diffs cleanly. */
export function buildOpenApiDocument(app: INestApplication, info: OpenApiInfo): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(info.title)
    .setDescription(info.description)
    .setVersion(info.version)
    .addApiKey({ type: 'apiKey', in: 'header', name: info.apiKeyHeader }, info.apiKeyHeader)
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller: string, method: string) => method,
    // Tags come from @ApiTags only: the default would add the controller's name as a second tag, listing an
    // operation of a controller without a class-level tag twice in /v1/docs.
    autoTagControllers: false,
  });
  declareRequestLimits(document, info.limits);
  // Parsing keeps the sorted text's key order, so the served document and the committed file both read sorted.
  return JSON.parse(stableJson(document)) as OpenAPIObject;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The parts of an OpenAPI operation this file reads and writes. */
interface ResponseObject {
  description: string;
  content?: unknown;
  headers?: Record<string, unknown>;
}

interface ParameterObject {
  in: string;
  schema?: Record<string, unknown>;
}

interface OperationObject {
  description?: string;
  responses: Record<string, ResponseObject>;
  parameters?: ParameterObject[];
  requestBody?: unknown;
}

/**
 * The limits the HTTP layer enforces on every route, written into each operation they apply to, so
 * that operations added later are documented as they behave: 400 for a malformed URL and 422 for
 * input over the limits or holding U+0000 (all), 414 and
 * `maxLength` for path parameters, `maxItems` for repeated query keys, 413 for bodies.
 */
/**
 * Every operation that checks credentials may answer 429: the credential's request budget is spent
 * (RATE_LIMIT_REQUESTS), or the client address has failed to authenticate too often (AUTH_FAILURE_LIMIT).
 */
function tooManyRequests(error: (description: string) => ResponseObject, own?: ResponseObject): ResponseObject {
  const integer = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });
  return {
    ...error(
      'Too many requests with this credential in the window, or too many failed authentications from this address ' +
        '(only requests that fail to authenticate are refused for it)' +
        (own ? `; or ${own.description}` : ''),
    ),
    headers: {
      'Retry-After': integer('Seconds to wait before trying again'),
      'RateLimit-Limit': integer('Requests the credential may make per window (request budget only)'),
      'RateLimit-Remaining': integer('Requests left in the window (request budget only)'),
      'RateLimit-Reset': integer('Seconds until the budget is whole again (request budget only)'),
      'RateLimit-Policy': {
        description: 'The limit and its window in seconds, e.g. `600;w=60` (request budget only)',
        schema: { type: 'string' },
      },
    },
  };
}

function declareRequestLimits(document: OpenAPIObject, limits: RequestLimits): void {
  const error = (description: string): ResponseObject => ({
    description,
    content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorResponse) } } },
  });
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, OperationObject | undefined>)[method];
      if (!operation) {
        continue;
      }
      const responses = operation.responses;
      const existing = responses['400'] as ResponseObject | undefined;
      const malformed = error(
        existing
          ? `${existing.description}; or a malformed percent-encoding in the URL path`
          : 'Malformed percent-encoding in the URL path',
      );
      // An operation that answers its own 400s in another shape (the MCP endpoint's JSON-RPC errors) keeps it.
      const own = (existing?.content as Record<string, { schema?: object }> | undefined)?.['application/json']?.schema;
      const errorRef = getSchemaPath(ErrorResponse);
      if (own && !('$ref' in own && own.$ref === errorRef)) {
        malformed.content = { 'application/json': { schema: { oneOf: [own, { $ref: errorRef }] } } };
      }
      responses['400'] = malformed;
      // Every route's whole input passes the input limits, so every operation may answer 422.
      responses['422'] ??= {
        description: 'Invalid path, query or body input',
        content: { 'application/json': { schema: { $ref: getSchemaPath(HTTPValidationError) } } },
      };
      const parameters = operation.parameters ?? [];
      if (parameters.some((parameter) => parameter.in === 'path')) {
        responses['414'] = error(`A path parameter is longer than ${limits.pathParamMaxLength} characters`);
      }
      for (const parameter of parameters) {
        const schema = parameter.schema;
        if (!schema) {
          continue;
        }
        if (parameter.in === 'path' && schema.type === 'string') {
          schema.maxLength = Math.min((schema.maxLength as number | undefined) ?? Infinity, limits.pathParamMaxLength);
        }
        if (parameter.in === 'query' && schema.type === 'array') {
          schema.maxItems = Math.min((schema.maxItems as number | undefined) ?? Infinity, limits.input.maxQueryValues);
        }
      }
      const unauthorized = responses['401'];
      if (unauthorized) {
        // Answered in the shape of the operation's 401 (the MCP endpoint's JSON-RPC errors).
        responses['429'] = { ...tooManyRequests(error, responses['429']), content: unauthorized.content };
      }
      // Node's HTTP parser answers these itself, before any route, with an empty body.
      responses['431'] = {
        description: `The request line and headers together are larger than ${limits.maxHeaderBytes} bytes`,
      };
      responses['503'] = error(
        'The database did not answer in time (retry later), or the instance is shutting down (the connection is ' +
          'closed: retry on another)',
      );
      if (operation.requestBody) {
        responses['413'] = error(`The body is larger than ${limits.bodyLimitBytes} bytes`);
        responses['415'] = error('The body is not JSON (`Content-Type` other than `application/json`)');
        const input = limits.input;
        operation.description =
          `${operation.description ?? ''}\n\nBody limits: ${limits.bodyLimitBytes} bytes, JSON nested at most ` +
          `${input.maxDepth} levels, arrays of at most ${input.maxArrayItems} items, strings of at most ` +
          `${input.maxStringLength} characters, no U+0000 (422 naming the path).`;
      }
    }
  }
}
