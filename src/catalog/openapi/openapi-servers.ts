import type { ServerTemplate } from '../../functions/openapi-wire.js';
import { isNode } from './openapi-schema.js';

type Node = Record<string, unknown>;

/**
 * The server URL of a document: the first `servers` entry with its variables at their defaults
 * (Swagger 2.0 arrives converted the same way), and a note when it had to be found otherwise. When
 * that entry is relative (or there is none, which OpenAPI reads as "/"), an absolute entry listed
 * after it is taken; else the relative URL is resolved, as the specification says, against the
 * location of the document — which APIs.guru documents record in `info.x-origin`.
 */
export function documentServer(doc: Node): { url?: string; note?: string; template?: ServerTemplate } {
  const servers = Array.isArray(doc.servers) ? doc.servers.filter(isNode) : [];
  const entries = servers.filter((server) => typeof server.url === 'string');
  const urls = entries.map(serverWithDefaults);
  const first = urls[0];
  if (first === undefined || !isAbsolute(first)) {
    const index = urls.findIndex(isAbsolute);
    if (index >= 0) {
      const absolute = urls[index];
      return {
        url: absolute,
        note: `server "${absolute}" used: the first server URL "${first}" is relative`,
        ...withTemplate(entries[index]),
      };
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
    return { url: first };
  }
  return { url: first, ...withTemplate(entries[0]) };
}

/**
 * The server of one operation: its own `servers`, else its path's, override the document's (OpenAPI
 * 3.x, Operation and Path Item objects); the first entry, variables at their defaults, a relative one
 * resolved against the document's server. Undefined when neither declares servers, or when the entry
 * cannot be made an absolute URL (a variable without a default): the document's server is used.
 */
export function operationServer(
  pathItem: Node,
  op: Node,
  documentUrl: string,
): { url: string; template?: ServerTemplate } | undefined {
  for (const owner of [op, pathItem]) {
    const servers = Array.isArray(owner.servers) ? owner.servers.filter(isNode) : [];
    const first = servers.find((server) => typeof server.url === 'string');
    if (first === undefined) {
      continue;
    }
    const url = serverWithDefaults(first);
    if (/[{}]/.test(url)) {
      return undefined;
    }
    if (isAbsolute(url)) {
      return { url, ...withTemplate(first) };
    }
    try {
      // A relative entry is resolved with its variables at their defaults: its template is not kept.
      const resolved = new URL(url, `${documentUrl.replace(/\/+$/, '')}/`).href;
      return isAbsolute(resolved) ? { url: resolved } : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The template of an absolute server entry whose URL has variables, each with its default and its `enum`
 * (as text), so that an app configuration can choose other values; nothing when it has none.
 */
function withTemplate(server: Node | undefined): { template?: ServerTemplate } {
  const url = typeof server?.url === 'string' ? server.url : '';
  const names = [...url.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1]);
  const declared = isNode(server?.variables) ? server.variables : {};
  if (names.length === 0 || !isAbsolute(serverWithDefaults(server as Node))) {
    return {};
  }
  const variables: ServerTemplate['variables'] = {};
  for (const name of names) {
    const spec = declared[name];
    if (!isNode(spec) || !isScalar(spec.default)) {
      return {};
    }
    variables[name] = { default: String(spec.default) };
    const choices = Array.isArray(spec.enum) ? spec.enum.filter(isScalar).map(String) : [];
    if (choices.length > 0) {
      variables[name].enum = [...new Set(choices)];
    }
  }
  return { template: { url: url.replace(/\/+$/, ''), variables } };
}

function isScalar(value: unknown): value is string | number | boolean {
  return ['string', 'number', 'boolean'].includes(typeof value);
}

function serverWithDefaults(server: Node): string {
  const variables = isNode(server.variables) ? server.variables : {};
  return (server.url as string).replace(/\{([^}]+)\}/g, (whole, variable: string) => {
    const spec = variables[variable];
    return isNode(spec) && isScalar(spec.default) ? String(spec.default) : whole;
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

export function isAbsolute(value: unknown): boolean {
  return typeof value === 'string' && /^https?:\/\/[^/]/i.test(value);
}
