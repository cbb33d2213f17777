import picomatch from 'picomatch';
import type { AppFile, FunctionFile } from '../catalog-files.js';
import { appNameFrom, functionNames, normaliseName, operationKey } from './openapi-names.js';
import { cleanText, isNode, toCatalogSchema } from './openapi-schema.js';

type Node = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;
const FORM = 'application/x-www-form-urlencoded';
const SECTIONS = ['path', 'query', 'header', 'cookie'] as const;
/** Headers the executor or the security scheme sets; a document declaring them as parameters gets them dropped. */
const MANAGED_HEADERS = new Set(['authorization', 'content-type', 'accept', 'content-length', 'user-agent', 'cookie']);

export interface OpenApiMappingOptions {
  appName?: string;
  server?: string;
  include?: string[];
  exclude?: string[];
  maxFunctions?: number;
  includeDeprecated?: boolean;
  /** An OpenID Connect discovery document (its JSON), for `openIdConnect` schemes. */
  oidcDiscovery?: Node;
  /** Schemes the API takes that the document does not declare (GitHub's description declares none). */
  addSchemes?: ('http_bearer' | 'http_basic')[];
  /** `METHOD path` → the function name the operation had in the catalogue (names stay stable). */
  previousNames?: ReadonlyMap<string, string>;
}

export interface SkippedOperation {
  operation: string;
  reason: string;
}

export interface OpenApiMapping<F = FunctionFile> {
  app: AppFile;
  functions: F[];
  skipped: SkippedOperation[];
  /** Things in the document the catalogue cannot express (security schemes it has no kind for…). */
  notes: string[];
}

/** A document the catalogue cannot take: refused whole, with a reason naming what to change. */
export class OpenApiRefusal extends Error {}

interface Operation {
  method: string;
  path: string;
  op: Node;
  pathItem: Node;
}

/**
 * One dereferenced OpenAPI 3.x document as a catalogue app and its functions, exactly as the
 * ACI-format import would load them from app.json and functions.json. Pure and deterministic.
 *
 * `keep` gives what is kept of each function as soon as it is made, instead of the function: with
 * their expanded schemas, Microsoft Graph beta's 21,638 functions take 517 MB of heap, twice their
 * records' text.
 */
export function mapOpenApiDocument(doc: Node, options?: OpenApiMappingOptions): OpenApiMapping;
export function mapOpenApiDocument<F>(
  doc: Node,
  options: OpenApiMappingOptions,
  keep: (fn: FunctionFile, index: number) => F,
): OpenApiMapping<F>;
export function mapOpenApiDocument(
  doc: Node,
  options: OpenApiMappingOptions = {},
  keep: (fn: FunctionFile, index: number) => unknown = (fn) => fn,
): OpenApiMapping<unknown> {
  const info = isNode(doc.info) ? doc.info : {};
  const title = titleOf(doc);
  const name = documentAppName(doc, options.appName);
  const server = options.server !== undefined ? { url: options.server } : documentServer(doc);
  const serverUrl = server.url;
  if (!serverUrl || !isAbsolute(serverUrl)) {
    throw new OpenApiRefusal(
      serverUrl
        ? `the server URL "${serverUrl}" is not an absolute http(s) URL: give one with --server`
        : 'the document names no server URL: give one with --server',
    );
  }
  const notes: string[] = server.note ? [server.note] : [];
  const skipped: SkippedOperation[] = [];
  const operations = selectOperations(doc, options, skipped);
  const security = mapSecurity(doc, operations, name, options.oidcDiscovery, notes);
  for (const kind of options.addSchemes ?? []) {
    security[kind] ??= {};
  }

  const names = functionNames(
    name,
    operations.map(({ method, path, op }) => ({
      method,
      path,
      operationId: typeof op.operationId === 'string' ? op.operationId : undefined,
    })),
    options.previousNames,
  );
  const functions: unknown[] = [];
  operations.forEach((operation, i) => {
    const label = operationKey(operation);
    const built = buildFunction(operation, names[i], serverUrl.replace(/\/+$/, ''));
    if (typeof built === 'string') {
      skipped.push({ operation: label, reason: built });
    } else if (options.maxFunctions !== undefined && functions.length >= options.maxFunctions) {
      skipped.push({ operation: label, reason: `over --max-functions ${options.maxFunctions}` });
    } else {
      functions.push(keep(built, functions.length));
    }
  });

  const description =
    cleanText(info.description, 1000) || cleanText(info.summary, 1000) || `${title || name} (imported from OpenAPI)`;
  const logo = isNode(info['x-logo']) && typeof info['x-logo'].url === 'string' ? info['x-logo'].url : null;
  const app: AppFile = {
    name,
    display_name: title || name,
    provider: providerOf(info, serverUrl),
    version: typeof info.version === 'string' ? info.version : '',
    description,
    logo,
    categories: categoriesOf(doc),
    visibility: 'public',
    active: true,
    security_schemes: security,
    default_security_credentials_by_scheme: {},
  };
  return { app, functions, skipped, notes };
}

/** The app name: `--app-name` or the title, normalised to the catalogue's rules. */
export function documentAppName(doc: Node, appName?: string): string {
  if (appName !== undefined && normaliseName(appName) === '') {
    throw new OpenApiRefusal(`--app-name "${appName}" has no letter or digit`);
  }
  return appNameFrom(appName ?? titleOf(doc));
}

function titleOf(doc: Node): string {
  const info = isNode(doc.info) ? doc.info : {};
  return typeof info.title === 'string' ? info.title.trim() : '';
}

/**
 * The server URL of a document: the first `servers` entry with its variables at their defaults
 * (Swagger 2.0 arrives converted the same way), and a note when it had to be found otherwise. When
 * that entry is relative (or there is none, which OpenAPI reads as "/"), an absolute entry listed
 * after it is taken; else the relative URL is resolved, as the specification says, against the
 * location of the document — which APIs.guru documents record in `info.x-origin`.
 */
export function documentServer(doc: Node): { url?: string; note?: string } {
  const servers = Array.isArray(doc.servers) ? doc.servers.filter(isNode) : [];
  const urls = servers.filter((server) => typeof server.url === 'string').map(serverWithDefaults);
  const first = urls[0];
  if (first === undefined || !isAbsolute(first)) {
    const absolute = urls.find(isAbsolute);
    if (absolute !== undefined) {
      return { url: absolute, note: `server "${absolute}" used: the first server URL "${first}" is relative` };
    }
    const origin = documentOrigin(doc);
    const relative = first ?? '/';
    // A variable without a default stays unresolved: then the document needs --server.
    if (origin !== undefined && !/[{}]/.test(relative)) {
      const url = new URL(relative, origin).href;
      return {
        url,
        note: `server "${url}": the ${first === undefined ? 'missing server URL ("/")' : `relative server URL "${first}"`} resolved against the document's origin ${origin}`,
      };
    }
  }
  return { url: first };
}

function serverWithDefaults(server: Node): string {
  const variables = isNode(server.variables) ? server.variables : {};
  return (server.url as string).replace(/\{([^}]+)\}/g, (whole, variable: string) => {
    const spec = variables[variable];
    return isNode(spec) && ['string', 'number', 'boolean'].includes(typeof spec.default) ? String(spec.default) : whole;
  });
}

/** The absolute http(s) URL the document was fetched from (`info.x-origin`, APIs.guru's record), if any. */
function documentOrigin(doc: Node): string | undefined {
  const info = isNode(doc.info) ? doc.info : {};
  const origins = Array.isArray(info['x-origin']) ? info['x-origin'] : [info['x-origin']];
  for (const origin of origins) {
    if (isNode(origin) && isAbsolute(origin.url)) {
      try {
        return new URL(origin.url as string).href;
      } catch {
        // not a URL after all: try the next one
      }
    }
  }
  return undefined;
}

function selectOperations(doc: Node, options: OpenApiMappingOptions, skipped: SkippedOperation[]): Operation[] {
  const include = options.include?.length ? picomatch(options.include) : undefined;
  const exclude = options.exclude?.length ? picomatch(options.exclude) : undefined;
  const paths = isNode(doc.paths) ? doc.paths : {};
  const operations: Operation[] = [];
  for (const path of Object.keys(paths).sort()) {
    const pathItem = paths[path];
    if (!isNode(pathItem)) {
      continue;
    }
    for (const method of METHODS) {
      const op = pathItem[method];
      if (!isNode(op)) {
        continue;
      }
      const label = operationKey({ method, path });
      // A glob matches the operationId or the path (`/repos/**`).
      const subjects = [path, typeof op.operationId === 'string' ? op.operationId : ''].filter(Boolean);
      if (include && !subjects.some((subject) => include(subject))) {
        continue;
      }
      if (exclude && subjects.some((subject) => exclude(subject))) {
        continue;
      }
      if (op.deprecated === true && !options.includeDeprecated) {
        skipped.push({ operation: label, reason: 'deprecated (import it with --include-deprecated)' });
        continue;
      }
      operations.push({ method, path, op, pathItem });
    }
  }
  return operations;
}

/** A function, or the reason the operation cannot become one. */
function buildFunction(
  { method, path, op, pathItem }: Operation,
  name: string,
  serverUrl: string,
): FunctionFile | string {
  const parameters = mergedParameters(pathItem, op);
  const top: Node = { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false };
  const topProperties = top.properties as Node;
  for (const section of SECTIONS) {
    const group: Node = { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false };
    const groupProperties = group.properties as Node;
    for (const parameter of parameters.filter((p) => p.in === section)) {
      const paramName = parameter.name as string;
      if (section === 'header' && MANAGED_HEADERS.has(paramName.toLowerCase())) {
        continue;
      }
      const schema = parameterSchema(parameter);
      if (schema === undefined) {
        if (parameter.required === true) {
          return `parameter "${paramName}" in ${section} has no schema`;
        }
        continue;
      }
      groupProperties[paramName] = schema;
      const required = parameter.required === true || section === 'path';
      if (required) {
        (group.required as string[]).push(paramName);
      }
      // The LLM is not shown a required parameter that can only take one value: it takes its default.
      const single = Array.isArray(schema.enum) && schema.enum.length === 1;
      if (required && single) {
        schema.default = (schema.enum as unknown[])[0];
      } else {
        (group.visible as string[]).push(paramName);
      }
    }
    for (const placeholder of path.matchAll(/\{([^{}]+)\}/g)) {
      if (section === 'path' && !(placeholder[1] in groupProperties)) {
        return `path parameter "${placeholder[1]}" is not declared`;
      }
    }
    if (Object.keys(groupProperties).length > 0) {
      addSection(top, topProperties, section, group);
    }
  }

  let contentType: string | undefined;
  const body = isNode(op.requestBody) ? op.requestBody : undefined;
  if (body) {
    const content = isNode(body.content) ? body.content : {};
    const mediaTypes = Object.keys(content);
    const json = mediaTypes.find((type) => /^application\/(.+\+)?json\b/i.test(type) || type === '*/*');
    const form = mediaTypes.find((type) => type.toLowerCase().startsWith(FORM));
    const chosen = json ?? form;
    if (chosen === undefined) {
      if (body.required === true && mediaTypes.length > 0) {
        return `request body only as ${mediaTypes.join(', ')} (JSON and form bodies are supported)`;
      }
    } else {
      const media = content[chosen];
      const schema = toCatalogSchema(isNode(media) ? media.schema : undefined);
      if (schema.type !== 'object' || !isNode(schema.properties)) {
        if (body.required === true || schema.type !== undefined) {
          return `request body is not a JSON object (${describeType(schema)})`;
        }
      } else {
        if (form) {
          contentType = json ? undefined : FORM;
        }
        if (!schema.description) {
          const text = cleanText(body.description);
          if (text) {
            schema.description = text;
          }
        }
        addSection(top, topProperties, 'body', schema, body.required === true);
      }
    }
  }

  const summary = cleanText(op.summary, 200);
  const details = cleanText(op.description, 600);
  const description =
    [summary, details && details !== summary ? details : '']
      .filter(Boolean)
      .join('. ')
      .replace(/\.\.\s/g, '. ') || operationKey({ method, path });
  const protocolData: Node = { method: method.toUpperCase(), path, server_url: serverUrl };
  if (contentType) {
    protocolData.content_type = contentType;
  }
  return {
    name,
    description,
    tags: Array.isArray(op.tags) ? op.tags.filter((tag): tag is string => typeof tag === 'string') : [],
    visibility: 'public',
    active: true,
    protocol: 'rest',
    protocol_data: protocolData,
    // No parameters: still an object schema (OpenAI and Anthropic refuse `{}`), as ACI-format apps write it.
    parameters: top,
  };
}

function addSection(top: Node, properties: Node, section: string, group: Node, forceRequired = false): void {
  properties[section] = group;
  (top.visible as string[]).push(section);
  if (forceRequired || (group.required as string[]).length > 0) {
    (top.required as string[]).push(section);
  }
}

/** Path-level parameters, overridden by operation-level ones with the same name and location. */
function mergedParameters(pathItem: Node, op: Node): Node[] {
  const byKey = new Map<string, Node>();
  for (const list of [pathItem.parameters, op.parameters]) {
    for (const parameter of Array.isArray(list) ? list.filter(isNode) : []) {
      if (typeof parameter.name === 'string' && typeof parameter.in === 'string') {
        byKey.set(`${parameter.in}:${parameter.name}`, parameter);
      }
    }
  }
  return [...byKey.values()];
}

function parameterSchema(parameter: Node): Node | undefined {
  let source: unknown = parameter.schema;
  if (source === undefined && isNode(parameter.content)) {
    const first = Object.values(parameter.content)[0];
    source = isNode(first) ? first.schema : undefined;
  }
  if (!isNode(source)) {
    return undefined;
  }
  const schema = toCatalogSchema(source);
  const description = cleanText(parameter.description);
  if (description) {
    schema.description = description;
  }
  return schema;
}

function describeType(schema: Node): string {
  return Array.isArray(schema.type) ? schema.type.join(' or ') : typeof schema.type === 'string' ? schema.type : 'any';
}

function providerOf(info: Node, serverUrl: string): string {
  const contact = isNode(info.contact) ? info.contact : {};
  if (typeof contact.name === 'string' && contact.name.trim()) {
    return contact.name.trim();
  }
  return new URL(serverUrl).hostname;
}

function categoriesOf(doc: Node): string[] {
  const info = isNode(doc.info) ? doc.info : {};
  const fromInfo = Array.isArray(info['x-apisguru-categories']) ? info['x-apisguru-categories'] : [];
  const fromTags = Array.isArray(doc.tags) ? doc.tags.filter(isNode).map((tag) => tag.name) : [];
  const all = [...(fromInfo as unknown[]), ...fromTags].filter(
    (tag): tag is string => typeof tag === 'string' && tag.trim() !== '',
  );
  return [...new Set(all.map((tag) => tag.trim()))].slice(0, 20);
}

/**
 * The catalogue's security schemes for the requirements the document states (globally and per
 * operation). The catalogue has one scheme of each kind per app: when a document offers two of a
 * kind, the first one required wins and the other is noted.
 */
function mapSecurity(
  doc: Node,
  operations: Operation[],
  appName: string,
  oidcDiscovery: Node | undefined,
  notes: string[],
): Record<string, Record<string, unknown>> {
  const components = isNode(doc.components) ? doc.components : {};
  const declared = isNode(components.securitySchemes) ? components.securitySchemes : {};
  const used: string[] = [];
  let allowsAnonymous = false;
  const requirementsOf = (value: unknown) => (Array.isArray(value) ? value.filter(isNode) : undefined);
  const global = requirementsOf(doc.security);
  for (const { op } of operations) {
    const requirements = requirementsOf(op.security) ?? global ?? [];
    if (requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)) {
      allowsAnonymous = true;
    }
    for (const requirement of requirements) {
      for (const scheme of Object.keys(requirement)) {
        if (!used.includes(scheme)) {
          used.push(scheme);
        }
      }
    }
  }
  const schemes: Record<string, Record<string, unknown>> = {};
  const scopes = new Map<string, Set<string>>();
  for (const schemeName of used) {
    const scheme = declared[schemeName];
    if (!isNode(scheme)) {
      notes.push(`security scheme "${schemeName}" is required but not declared`);
      continue;
    }
    const mapped = mapScheme(schemeName, scheme, appName, oidcDiscovery, notes);
    if (!mapped) {
      continue;
    }
    if (schemes[mapped.kind]) {
      notes.push(`security scheme "${schemeName}" left out: the app already has a ${mapped.kind} scheme`);
      continue;
    }
    schemes[mapped.kind] = mapped.settings;
    if (mapped.scopes) {
      scopes.set(mapped.kind, mapped.scopes);
    }
  }
  const oauth2 = schemes.oauth2;
  if (oauth2) {
    oauth2.scope = [...(scopes.get('oauth2') ?? [])].sort().join(' ');
  }
  if (allowsAnonymous || Object.keys(schemes).length === 0) {
    schemes.no_auth = {};
  }
  return schemes;
}

function mapScheme(
  schemeName: string,
  scheme: Node,
  appName: string,
  oidcDiscovery: Node | undefined,
  notes: string[],
): { kind: string; settings: Node; scopes?: Set<string> } | undefined {
  const type = typeof scheme.type === 'string' ? scheme.type : '';
  const placeholders = {
    client_id: `{{ ${appName}_CLIENT_ID }}`,
    client_secret: `{{ ${appName}_CLIENT_SECRET }}`,
  };
  switch (type) {
    case 'apiKey': {
      const location = scheme.in;
      if ((location === 'header' || location === 'query' || location === 'cookie') && typeof scheme.name === 'string') {
        return { kind: 'api_key', settings: { location, name: scheme.name } };
      }
      notes.push(`security scheme "${schemeName}": apiKey in "${String(location)}" is not supported`);
      return undefined;
    }
    case 'http': {
      const kind = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : '';
      if (kind === 'basic') {
        return { kind: 'http_basic', settings: {} };
      }
      if (kind === 'bearer') {
        return { kind: 'http_bearer', settings: {} };
      }
      notes.push(`security scheme "${schemeName}": http "${kind}" is not supported`);
      return undefined;
    }
    case 'oauth2': {
      const flows = isNode(scheme.flows) ? scheme.flows : {};
      const code = isNode(flows.authorizationCode) ? flows.authorizationCode : undefined;
      if (code && isAbsolute(code.authorizationUrl) && isAbsolute(code.tokenUrl)) {
        return {
          kind: 'oauth2',
          settings: oauth2Settings(
            placeholders,
            code.authorizationUrl as string,
            code.tokenUrl as string,
            isAbsolute(code.refreshUrl) ? (code.refreshUrl as string) : (code.tokenUrl as string),
          ),
          scopes: new Set(isNode(code.scopes) ? Object.keys(code.scopes) : []),
        };
      }
      // Without an authorization-code flow Patchbay cannot link an account, but the API takes a
      // bearer token obtained elsewhere.
      notes.push(
        `security scheme "${schemeName}": oauth2 without an authorization-code flow (${Object.keys(flows).join(', ') || 'no flows'}) is imported as http_bearer`,
      );
      return { kind: 'http_bearer', settings: {} };
    }
    case 'openIdConnect': {
      if (
        oidcDiscovery &&
        isAbsolute(oidcDiscovery.authorization_endpoint) &&
        isAbsolute(oidcDiscovery.token_endpoint)
      ) {
        const supported = Array.isArray(oidcDiscovery.scopes_supported)
          ? oidcDiscovery.scopes_supported.filter((s): s is string => typeof s === 'string')
          : ['openid'];
        return {
          kind: 'oauth2',
          settings: oauth2Settings(
            placeholders,
            oidcDiscovery.authorization_endpoint as string,
            oidcDiscovery.token_endpoint as string,
            oidcDiscovery.token_endpoint as string,
          ),
          scopes: new Set(supported),
        };
      }
      notes.push(
        `security scheme "${schemeName}": openIdConnect needs its discovery document (--openid-discovery FILE); imported as http_bearer`,
      );
      return { kind: 'http_bearer', settings: {} };
    }
    default:
      notes.push(`security scheme "${schemeName}": type "${type}" is not supported`);
      return undefined;
  }
}

function oauth2Settings(
  placeholders: { client_id: string; client_secret: string },
  authorizeUrl: string,
  tokenUrl: string,
  refreshUrl: string,
): Node {
  return {
    location: 'header',
    name: 'Authorization',
    prefix: 'Bearer',
    client_id: placeholders.client_id,
    client_secret: placeholders.client_secret,
    scope: '',
    authorize_url: authorizeUrl,
    access_token_url: tokenUrl,
    refresh_token_url: refreshUrl,
  };
}

function isAbsolute(value: unknown): boolean {
  return typeof value === 'string' && /^https?:\/\/[^/]/i.test(value);
}
