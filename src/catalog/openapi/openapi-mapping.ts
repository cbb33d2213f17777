import picomatch from 'picomatch';
import type { AppFile, FunctionFile } from '../catalog-files.js';
import { appNameFrom, functionNames, normaliseName, operationKey } from './openapi-names.js';
import { buildFunction, type Operation } from './openapi-operation.js';
import { cleanText, isNode } from './openapi-schema.js';
import { mapSecurity, operationSecurity } from './openapi-security.js';
import { documentServer, isAbsolute, operationServer } from './openapi-servers.js';
import type { OpenApiWire, SecurityMember } from '../../functions/openapi-wire.js';

type Node = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

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
  /** Operations imported in a reduced form, each with what was left out. */
  reduced: SkippedOperation[];
  /** Things in the document the catalogue cannot express (security schemes it has no kind for…). */
  notes: string[];
}

/** A document the catalogue cannot take: refused whole, with a reason naming what to change. */
export class OpenApiRefusal extends Error {}

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
  keep: (fn: FunctionFile, index: number) => F | undefined,
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
  const members = new Map<string, SecurityMember>();
  const security = mapSecurity(doc, operations, name, options.oidcDiscovery, notes, members);
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
  const reduced: SkippedOperation[] = [];
  operations.forEach((operation, i) => {
    const label = operationKey(operation);
    const leftOut: string[] = [];
    // A server given with --server replaces every server the document declares; else an operation's own
    // (or its path's) servers override the document's.
    const own = options.server === undefined ? operationServer(operation.pathItem, operation.op, serverUrl) : undefined;
    const built = buildFunction(operation, names[i], (own?.url ?? serverUrl).replace(/\/+$/, ''), leftOut);
    // A server with variables keeps its template, so that an app configuration may choose their values.
    const template = own ? own.template : server.template;
    if (typeof built !== 'string' && template) {
      (built.protocol_data.openapi as OpenApiWire).server = template;
    }
    // Requirements that combine schemes (AND) are kept with the function, with their alternatives (OR).
    const requirements = operationSecurity(doc, operation.op, members);
    if (typeof built !== 'string' && requirements) {
      (built.protocol_data.openapi as OpenApiWire).security = requirements;
    }
    if (typeof built === 'string') {
      skipped.push({ operation: label, reason: built });
    } else if (options.maxFunctions !== undefined && functions.length >= options.maxFunctions) {
      skipped.push({ operation: label, reason: `over --max-functions ${options.maxFunctions}` });
    } else {
      const kept = keep(built, functions.length);
      // `keep` answers undefined for a function the catalogue's rules refuse: it is skipped, with its reason.
      if (kept === undefined) {
        return;
      }
      functions.push(kept);
      for (const reason of leftOut) {
        reduced.push({ operation: label, reason });
      }
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
  return { app, functions, skipped, reduced, notes };
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
