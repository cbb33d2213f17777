/**
 * The sample of `npm run bench:fidelity`: each operation's serialization features (its strata), a
 * deterministic stratified sample, and the documents trimmed to the sampled operations.
 */
import { createHash } from 'node:crypto';

type Node = Record<string, unknown>;

export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** One operation of a document, with the serialization features it uses (its strata). */
export interface SampledOperation {
  file: string;
  method: string;
  path: string;
  features: string[];
}

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A local `#/…` reference resolved within the document (one level at a time, cycles stopped). */
export function resolve(doc: Node, value: unknown, depth = 0): unknown {
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
