/**
 * The proof of issue #28, shared by `npm run bench:fidelity` (a stratified sample of the APIs.guru
 * directory) and its test (a fixed sample of about 300 operations): operations are imported from
 * their documents, executed with generated inputs through POST /v1/functions/{name}/execute against
 * a local recording upstream, and every request the upstream received is validated against the
 * operation in its original document by an OpenAPI request validator Patchbay's code does not use
 * (openapi-backend).
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateSync } from 'json-schema-faker';
import { OpenAPIBackend, type Request as ValidatorRequest } from 'openapi-backend';
import { parse as parseQuery } from 'qs';

type Node = Record<string, unknown>;

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** One operation of a document, with the serialization features it uses (its strata). */
export interface SampledOperation {
  file: string;
  method: string;
  path: string;
  features: string[];
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A local `#/…` reference resolved within the document (one level at a time, cycles stopped). */
function resolve(doc: Node, value: unknown, depth = 0): unknown {
  if (!isNode(value) || typeof value.$ref !== 'string' || depth > 10) {
    return value;
  }
  const ref = value.$ref;
  if (!ref.startsWith('#/')) {
    return undefined;
  }
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw.replace(/~1/g, '/').replace(/~0/g, '~'));
    node = isNode(node) ? node[key] : undefined;
  }
  return resolve(doc, node, depth + 1);
}

function schemaKind(doc: Node, schema: unknown): string {
  const resolved = resolve(doc, schema);
  if (!isNode(resolved)) {
    return 'any';
  }
  if (resolved.type === 'array' || resolved.items !== undefined) {
    return 'array';
  }
  if (resolved.type === 'object' || isNode(resolved.properties) || isNode(resolved.additionalProperties)) {
    return 'object';
  }
  if (Array.isArray(resolved.oneOf) || Array.isArray(resolved.anyOf) || Array.isArray(resolved.allOf)) {
    return 'composed';
  }
  return 'primitive';
}

/** The features an operation's parameters and body use, as stratum names (`query:form:false:array`…). */
export function operationFeatures(doc: Node, pathItem: Node, op: Node): string[] {
  const features = new Set<string>();
  const parameters = [
    ...(Array.isArray(pathItem.parameters) ? (pathItem.parameters as unknown[]) : []),
    ...(Array.isArray(op.parameters) ? (op.parameters as unknown[]) : []),
  ]
    .map((p) => resolve(doc, p))
    .filter(isNode);
  for (const parameter of parameters) {
    const location = String(parameter.in);
    if (isNode(parameter.content)) {
      features.add(`${location}:content`);
      continue;
    }
    const kind = schemaKind(doc, parameter.schema);
    const style = typeof parameter.style === 'string' ? parameter.style : undefined;
    const explode = typeof parameter.explode === 'boolean' ? parameter.explode : undefined;
    if (kind === 'array' || kind === 'object' || style !== undefined || explode !== undefined) {
      features.add(`${location}:${style ?? 'default'}:${explode ?? 'default'}:${kind}`);
    }
    if (parameter.allowReserved === true) {
      features.add(`${location}:allowReserved`);
    }
    if (location === 'cookie' || location === 'header') {
      features.add(location);
    }
  }
  const body = resolve(doc, op.requestBody);
  if (isNode(body) && isNode(body.content)) {
    for (const [mediaType, media] of Object.entries(body.content)) {
      const type = mediaType.split(';')[0].trim().toLowerCase();
      const family = /^application\/json$/.test(type)
        ? 'json'
        : /\+json$|\/json$/.test(type)
          ? '+json'
          : /^(application\/x-www-form-urlencoded|multipart\/form-data|application\/octet-stream|text\/plain|\*\/\*)$/.test(
                type,
              )
            ? type
            : /^text\/|xml|yaml/.test(type)
              ? 'text-like'
              : 'other-binary';
      features.add(`body:${family}`);
      if (isNode(media) && isNode(media.encoding)) {
        features.add(`body:${family}:encoding`);
      }
      if (isNode(media) && schemaKind(doc, media.schema) === 'composed') {
        features.add(`body:${family}:composed`);
      }
    }
  }
  if (features.size === 0) {
    features.add('plain');
  }
  return [...features].sort();
}

/** The operations of one document, in path order. */
export function documentOperations(file: string, doc: Node): SampledOperation[] {
  const paths = isNode(doc.paths) ? doc.paths : {};
  const found: SampledOperation[] = [];
  for (const path of Object.keys(paths).sort()) {
    const pathItem = paths[path];
    if (!isNode(pathItem)) {
      continue;
    }
    for (const method of METHODS) {
      const op = pathItem[method];
      if (isNode(op) && op.deprecated !== true) {
        found.push({ file, method, path, features: operationFeatures(doc, pathItem, op) });
      }
    }
  }
  return found;
}

function rank(seed: number, operation: SampledOperation): string {
  return createHash('sha1').update(`${seed}:${operation.file}:${operation.method} ${operation.path}`).digest('hex');
}

/**
 * A deterministic stratified sample: strata (the features) are visited rarest first, round-robin, each
 * taking its next operation in seeded order, at most `perDocument` operations per document, until
 * `target` operations are taken or none is left.
 */
export function stratifiedSample(
  operations: SampledOperation[],
  target: number,
  perDocument: number,
  seed: number,
): SampledOperation[] {
  const strata = new Map<string, SampledOperation[]>();
  for (const operation of [...operations].sort((a, b) => rank(seed, a).localeCompare(rank(seed, b)))) {
    for (const feature of operation.features) {
      let list = strata.get(feature);
      if (!list) {
        list = [];
        strata.set(feature, list);
      }
      list.push(operation);
    }
  }
  const order = [...strata.keys()].sort(
    (a, b) => (strata.get(a)?.length ?? 0) - (strata.get(b)?.length ?? 0) || a.localeCompare(b),
  );
  const taken = new Set<SampledOperation>();
  const perFile = new Map<string, number>();
  const cursor = new Map<string, number>();
  let progress = true;
  while (taken.size < target && progress) {
    progress = false;
    for (const feature of order) {
      const list = strata.get(feature) ?? [];
      let index = cursor.get(feature) ?? 0;
      while (index < list.length) {
        const candidate = list[index];
        index += 1;
        if (!taken.has(candidate) && (perFile.get(candidate.file) ?? 0) < perDocument) {
          taken.add(candidate);
          perFile.set(candidate.file, (perFile.get(candidate.file) ?? 0) + 1);
          progress = true;
          break;
        }
      }
      cursor.set(feature, index);
      if (taken.size >= target) {
        break;
      }
    }
  }
  return [...taken];
}

/**
 * The document with only the given operations (path-level parameters kept) and the components they
 * reach: the operations themselves are untouched, so validating against it is validating against
 * the original document's operations.
 */
export function trimmedDocument(doc: Node, operations: { method: string; path: string }[]): Node {
  const paths: Node = {};
  const source = isNode(doc.paths) ? doc.paths : {};
  for (const { method, path } of operations) {
    const item = source[path];
    if (!isNode(item)) {
      continue;
    }
    const kept = (paths[path] ??= Object.fromEntries(
      Object.entries(item).filter(([key]) => !METHODS.includes(key as never)),
    )) as Node;
    kept[method] = item[method];
  }
  const trimmed: Node = { ...doc, paths };
  const components = isNode(doc.components) ? doc.components : undefined;
  if (components) {
    const reached = new Set<string>();
    // Everything but the other operations and the components themselves may reference components (3.1 webhooks…).
    const stack: unknown[] = [
      paths,
      ...Object.entries(doc)
        .filter(([key]) => key !== 'paths' && key !== 'components')
        .map(([, value]) => value),
    ];
    const securitySchemes = isNode(components.securitySchemes) ? components.securitySchemes : {};
    while (stack.length > 0) {
      const node = stack.pop();
      if (Array.isArray(node)) {
        stack.push(...(node as unknown[]));
      } else if (isNode(node)) {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string' && value.startsWith('#/paths/') && !reached.has(value)) {
            // A reference into another operation: that operation is kept too, so that the reference resolves.
            reached.add(value);
            const [, , rawPath, method] = value.split('/');
            const path = rawPath.replace(/~1/g, '/').replace(/~0/g, '~');
            const item = source[path];
            if (isNode(item) && method !== undefined && isNode(item[method])) {
              const kept = (paths[path] ??= Object.fromEntries(
                Object.entries(item).filter(([name]) => !METHODS.includes(name as never)),
              )) as Node;
              kept[method] ??= item[method];
              stack.push(item[method]);
            }
          } else if (
            key === '$ref' &&
            typeof value === 'string' &&
            value.startsWith('#/components/') &&
            !reached.has(value)
          ) {
            reached.add(value);
            stack.push(resolve(doc, { $ref: value.split('/').slice(0, 4).join('/') }));
          } else if (typeof value === 'object' && value !== null) {
            stack.push(value);
          }
        }
      }
    }
    const kept: Node = {};
    for (const ref of reached) {
      const [, , section, name] = ref.split('/');
      const group = components[section];
      if (isNode(group) && name !== undefined && name in group) {
        ((kept[section] ??= {}) as Node)[name] = group[name];
      }
    }
    if (Object.keys(securitySchemes).length > 0) {
      kept.securitySchemes = securitySchemes;
    }
    trimmed.components = kept;
  }
  return trimmed;
}

/**
 * The same document made importable against the recording upstream: title `Fidelity <k>` (app
 * FIDELITY_<k>), each operation's operationId `op<j>` (function FIDELITY_<k>__OP<j>), the server
 * `upstream/f<k>`, and no security (the bench checks serialization, not credentials).
 */
export function importableDocument(
  trimmed: Node,
  k: number,
  upstreamUrl: string,
  operations: { method: string; path: string }[],
): Node {
  const doc = structuredClone(trimmed);
  doc.info = { ...(isNode(doc.info) ? doc.info : {}), title: `Fidelity ${k}` };
  delete (doc.info as Node)['x-origin'];
  doc.servers = [{ url: `${upstreamUrl}/f${k}` }];
  delete doc.security;
  const paths = doc.paths as Node;
  operations.forEach(({ method, path }, j) => {
    const item = paths[path] as Node;
    delete item.servers;
    const op = item[method] as Node;
    op.operationId = `op${j}`;
    delete op.security;
    delete op.servers;
  });
  return doc;
}

/** One request as the upstream received it. */
export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local HTTP server that answers 200 `{}` to everything and records what it received. */
export class RecordingUpstream {
  readonly received: Recorded[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<RecordingUpstream> {
    const server = createServer();
    const upstream = new RecordingUpstream(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        upstream.received.push({
          method: request.method ?? '',
          url: request.url ?? '/',
          headers: request.headers,
          body: Buffer.concat(chunks),
        });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

/** How the harness reaches the Patchbay API under test. */
export interface Api {
  get(path: string): Promise<{ status: number; body: unknown }>;
  post(path: string, body: unknown): Promise<{ status: number; body: unknown }>;
}

export interface FidelityReport {
  operations_sampled: number;
  imported: number;
  not_imported: Record<string, { count: number; example: string }>;
  inputs_generated: number;
  ungeneratable: Record<string, { count: number; example: string }>;
  executed: number;
  requests_valid: number;
  requests_invalid: number;
  valid_percent: number;
  invalid_by_reason: Record<string, { count: number; example: string }>;
  features: Record<string, number>;
}

function count(map: Record<string, { count: number; example: string }>, reason: string, example: string): void {
  const entry = (map[reason] ??= { count: 0, example });
  entry.count += 1;
}

/** A document prepared for the run: its k, its trimmed original, and its sampled operations in j order. */
export interface PreparedDocument {
  k: number;
  original: Node;
  operations: SampledOperation[];
}

/**
 * Executes every imported operation once with an input generated from its definition (seeded) and
 * validates what the upstream received against the original operation.
 */
export async function runFidelity(
  api: Api,
  ownerId: string,
  upstream: RecordingUpstream,
  documents: PreparedDocument[],
  seed: number,
  onProgress?: (done: number, total: number) => void,
): Promise<FidelityReport> {
  const report: FidelityReport = {
    operations_sampled: documents.reduce((n, d) => n + d.operations.length, 0),
    imported: 0,
    not_imported: {},
    inputs_generated: 0,
    ungeneratable: {},
    executed: 0,
    requests_valid: 0,
    requests_invalid: 0,
    valid_percent: 0,
    invalid_by_reason: {},
    features: {},
  };
  let done = 0;
  for (const document of documents) {
    const app = `FIDELITY_${document.k}`;
    const configured = await api.post('/v1/app-configurations', { app_name: app, security_scheme: 'no_auth' });
    const linked =
      configured.status < 300
        ? await api.post('/v1/linked-accounts/no-auth', { app_name: app, linked_account_owner_id: ownerId })
        : configured;
    let validator: OpenAPIBackend | undefined;
    let coercing: OpenAPIBackend | undefined;
    const validatorDoc = structuredClone(document.original);
    document.operations.forEach(({ method, path }, j) => {
      const op = ((validatorDoc.paths as Node)[path] as Node)[method] as Node;
      op.operationId ??= `__fidelity_op${j}`;
    });
    for (const [j, operation] of document.operations.entries()) {
      done += 1;
      onProgress?.(done, report.operations_sampled);
      for (const feature of operation.features) {
        report.features[feature] = (report.features[feature] ?? 0) + 1;
      }
      const label = `${operation.file} ${operation.method.toUpperCase()} ${operation.path}`;
      if (linked.status >= 300) {
        count(report.not_imported, 'the document was not imported', label);
        continue;
      }
      const name = `${app}__OP${j}`;
      const definition = await api.get(`/v1/functions/${name}/definition?format=openai`);
      if (definition.status !== 200) {
        count(report.not_imported, 'the operation was skipped at import', label);
        continue;
      }
      report.imported += 1;
      const schema = (definition.body as { function: { parameters: Node } }).function.parameters;
      let input: unknown;
      try {
        input = generateSync(schema, {
          seed: seed + j,
          alwaysFakeOptionals: true,
          maxItems: 3,
          maxLength: 12,
          minLength: 1,
          maxDepth: 4,
          useDefaultValue: true,
        });
      } catch (error) {
        count(report.ungeneratable, `the generator failed: ${(error as Error).message.slice(0, 80)}`, label);
        continue;
      }
      const before = upstream.received.length;
      const result = await api.post(`/v1/functions/${name}/execute`, {
        function_input: input,
        linked_account_owner_id: ownerId,
      });
      if (result.status !== 200) {
        // Patchbay refused the generated input: the generator made a value the definition does not accept.
        const text = JSON.stringify(result.body);
        const reason = /must match exactly one schema in oneOf/.test(text)
          ? 'generated input matches several oneOf branches'
          : /format/.test(text)
            ? 'generated input breaks a format'
            : /pattern/.test(text)
              ? 'generated input breaks a pattern'
              : `Patchbay answered ${result.status}`;
        count(report.ungeneratable, reason, `${label}: ${text.slice(0, 200)}`);
        continue;
      }
      report.inputs_generated += 1;
      const received = upstream.received[before];
      if (!received) {
        count(
          report.invalid_by_reason,
          `no request reached the upstream: ${JSON.stringify(result.body).slice(0, 100)}`,
          label,
        );
        report.executed += 1;
        report.requests_invalid += 1;
        continue;
      }
      report.executed += 1;
      const textFields = /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(
        String(received.headers['content-type'] ?? ''),
      );
      const chosen = textFields
        ? (coercing ??= await newValidator(validatorDoc, true))
        : (validator ??= await newValidator(validatorDoc));
      const problems = await validate(chosen, validatorDoc, operation, j, received, document.k);
      if (problems.length === 0) {
        report.requests_valid += 1;
      } else {
        report.requests_invalid += 1;
        count(
          report.invalid_by_reason,
          problems[0].reason,
          `${label}: ${problems[0].detail} — ${received.method} ${received.url}`,
        );
      }
    }
  }
  report.valid_percent =
    report.executed === 0 ? 0 : Math.round((report.requests_valid / report.executed) * 10000) / 100;
  return report;
}

/**
 * openapi-backend parses no form or multipart body: the harness reads them (qs, as openapi-backend reads
 * query strings; the WHATWG multipart parser), and their fields, which are text on the wire, are
 * checked with type coercion (`coerce`), as the validator checks query and path parameters.
 */
async function newValidator(doc: Node, coerce = false): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(doc) as never,
    quick: true,
    validate: true,
    strict: false,
    ajvOpts: { strict: false, validateFormats: true, ...(coerce ? { coerceTypes: 'array' } : {}) },
  });
  await api.init();
  return api;
}

/** Why the received request does not satisfy the operation, as reason (for grouping) and detail. */
async function validate(
  validator: OpenAPIBackend,
  doc: Node,
  operation: SampledOperation,
  j: number,
  received: Recorded,
  k: number,
): Promise<{ reason: string; detail: string }[]> {
  const problems: { reason: string; detail: string }[] = [];
  const prefix = `/f${k}`;
  const url = received.url.startsWith(prefix) ? received.url.slice(prefix.length) : received.url;
  const [path, query = ''] = url.split(/\?(.*)/s);
  const op = ((doc.paths as Node)[operation.path] as Node)[operation.method] as Node;
  const declared = resolve(doc, op.requestBody);
  const content = isNode(declared) && isNode(declared.content) ? declared.content : {};
  const contentType = String(received.headers['content-type'] ?? '');
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  if (received.body.length === 0 && contentType) {
    problems.push({ reason: 'Content-Type without a body', detail: contentType });
  }
  const matches = (declaredType: string) => {
    const type = declaredType.split(';')[0].trim().toLowerCase();
    return (
      type === mediaType ||
      (type.includes('*') && new RegExp(`^${type.replace(/[.+]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(mediaType))
    );
  };
  if (received.body.length > 0 && !Object.keys(content).some(matches)) {
    problems.push({ reason: 'body media type not declared by the operation', detail: contentType });
  }
  if (isNode(declared) && declared.required === true && received.body.length === 0) {
    problems.push({ reason: 'required body not sent', detail: '' });
  }
  let body: unknown;
  if (received.body.length > 0) {
    if (mediaType === 'application/x-www-form-urlencoded') {
      body = parseQuery(received.body.toString('utf8'), { depth: 10, arrayLimit: 100 });
    } else if (mediaType === 'multipart/form-data') {
      try {
        const form = await new Response(received.body, { headers: { 'content-type': contentType } }).formData();
        const fields: Node = {};
        for (const [name, value] of form.entries()) {
          const text = typeof value === 'string' ? value : '(file)';
          fields[name] = name in fields ? [...[fields[name]].flat(), text] : text;
        }
        body = fields;
      } catch (error) {
        problems.push({ reason: 'multipart body unreadable', detail: (error as Error).message });
      }
    } else {
      body = received.body.toString('utf8');
    }
  }
  const request: ValidatorRequest = {
    method: received.method,
    path: `${path}${query ? `?${query}` : ''}`,
    query,
    headers: received.headers as Record<string, string | string[]>,
    body,
  };
  try {
    const result = validator.validator.validateRequest(
      request,
      (op.operationId as string | undefined) ?? `__fidelity_op${j}`,
    );
    for (const error of result.errors ?? []) {
      // Grouped by the part of the request and the rule broken; the parameter's name is in the example.
      const where = error.instancePath.split('/')[1] || 'request';
      problems.push({
        reason: `${where} ${error.keyword}: ${error.message ?? ''}`.slice(0, 120),
        detail: `${error.instancePath} ${error.message ?? ''}`,
      });
    }
  } catch (error) {
    problems.push({ reason: `validator error: ${(error as Error).message.slice(0, 80)}`, detail: '' });
  }
  return problems;
}
