/**
 * How an imported OpenAPI operation puts its input on the wire, stored with the function at import
 * (`protocol_data.openapi`) so that execution reads it instead of a document. Only what differs from
 * the defaults of OpenAPI is written, and `v` versions the shape: re-importing a document whose
 * rules changed shows the function as updated.
 *
 * ACI-format functions have no such block and keep their format's rules (arrays as repeated keys,
 * objects as JSON text, form bodies flat).
 */
export interface OpenApiWire {
  v: 1;
  /** Non-default parameter rules, by location then parameter name. */
  parameters?: Partial<Record<ParameterSection, Record<string, ParameterRule>>>;
  /** The body's media type and encodings; absent when the operation takes no body. */
  body?: BodyRule;
  /**
   * The server's URL template when it has variables (`https://{region}.example.com/{version}`): `server_url`
   * holds it with every variable at its default, and an app configuration's `server_variables` replace them.
   */
  server?: ServerTemplate;
  /**
   * The operation's security requirements when one of them combines schemes (AND): alternatives (OR), each the
   * schemes it needs together. Absent when every requirement is a single scheme (the configured scheme serves).
   */
  security?: SecurityMember[][];
}

/**
 * One scheme of a security requirement, by its name in the document. `kind`: it is the app's catalogue scheme of
 * that kind (the linked account's credential serves when the configuration uses it). `in` and `name`: an apiKey
 * scheme's place, where a value from the app configuration's `extra_credentials` goes otherwise. A member with
 * neither cannot be sent.
 */
export interface SecurityMember {
  scheme: string;
  kind?: 'api_key' | 'http_basic' | 'http_bearer' | 'oauth2';
  in?: 'header' | 'query' | 'cookie';
  name?: string;
}

/** An absolute server URL with `{variables}` (OpenAPI's Server Object), each with its default and choices. */
export interface ServerTemplate {
  url: string;
  variables: Record<string, ServerVariable>;
}

export interface ServerVariable {
  default: string;
  /** The values allowed, when the document restricts them. */
  enum?: string[];
}

export type ParameterSection = 'path' | 'query' | 'header' | 'cookie';

export type ParameterStyle =
  | 'simple'
  | 'label'
  | 'matrix'
  | 'form'
  | 'spaceDelimited'
  | 'pipeDelimited'
  | 'deepObject'
  /** Swagger 2.0's `collectionFormat: tsv`, which OpenAPI 3 has no style for. */
  | 'tabDelimited';

export interface ParameterRule {
  style?: ParameterStyle;
  explode?: boolean;
  allow_reserved?: true;
  /** A parameter described by `content`: its value is sent as text of this media type (JSON text for JSON). */
  content_type?: string;
}

export interface BodyRule {
  /** The media type sent, chosen at import: JSON first, then form, multipart, text, binary. */
  media_type: string;
  /** Per-property encoding of a form or multipart body (OpenAPI's Encoding Object). */
  encoding?: Record<string, ParameterRule>;
  /** Multipart properties that are files, given as `{ base64, filename?, media_type? }` (or arrays of them). */
  files?: string[];
  /**
   * A body in a binary media type whose schema says `format: byte`: base64 is what goes on the wire,
   * so the text given is sent as it is, not decoded.
   */
  base64_text?: true;
}

export const OPENAPI_WIRE_VERSION = 1;

/** The default style and explode of a location (OpenAPI 3.1, Parameter Object). */
export function defaultStyle(section: ParameterSection): ParameterStyle {
  return section === 'path' || section === 'header' ? 'simple' : 'form';
}

export function defaultExplode(style: ParameterStyle): boolean {
  return style === 'form';
}

/** Media types whose content is text, sent as the string given (others that are not JSON, form or multipart are bytes). */
export function isTextual(type: string): boolean {
  return /^text\/|^application\/([^;]*\+)?(xml|yaml|x-yaml|jwt|text|javascript|x-ndjson|sql|graphql)\b/i.test(type);
}

/** No value adds a query, a fragment or user info to a server URL. */
const SERVER_VARIABLE_VALUE = /^[^?#@\\\s\p{Cc}]{0,255}$/u;

/**
 * Why `value` cannot be server variable `name` of `template`, or undefined when it can:
 * - at most 255 characters, none of `?`, `#`, `@`, `\`, white space or control characters;
 * - one of the variable's `enum` when it has one;
 * - before the path (scheme, host, port) no `/`;
 * - a variable that chooses the host freely (nothing fixed after it in the host name but a top-level label, as in
 *   `https://{host}/api` or `https://api.{domain}`) takes only its `enum`, else its default: a project could
 *   otherwise send its linked accounts' credentials to a host of its choosing. A host pinned by a fixed domain
 *   (`https://{tenant}.example.com`) takes any name.
 */
export function serverVariableProblem(template: ServerTemplate, name: string, value: string): string | undefined {
  const variable = template.variables[name];
  if (!variable) {
    return undefined;
  }
  if (!SERVER_VARIABLE_VALUE.test(value)) {
    return `server variable ${name}: at most 255 characters, none of "?", "#", "@", "\\", white space or control characters`;
  }
  if (variable.enum) {
    return variable.enum.includes(value)
      ? undefined
      : `server variable ${name}: "${value}" is not one of the values the app's document allows: ${variable.enum.join(', ')}`;
  }
  const place = placeOf(template.url, name);
  if (place !== 'path' && value.includes('/')) {
    return `server variable ${name}: it stands before the path of ${template.url}, so it may not contain "/"`;
  }
  if (place === 'free_host' && value !== variable.default) {
    return (
      `server variable ${name}: it chooses the host of ${template.url} and the app's document lists no values for it ` +
      `(enum), so only its default "${variable.default}" is allowed; another host is the catalogue's choice ` +
      '(patchbay catalog import-openapi --server)'
    );
  }
  return undefined;
}

/** Where a variable stands in a server URL template; the most exposed place when it stands in several. */
function placeOf(url: string, name: string): 'path' | 'authority' | 'free_host' {
  const authorityStart = url.indexOf('://') + 3;
  const pathStart = literalIndex(url, '/', authorityStart) ?? url.length;
  const portStart = literalIndex(url, ':', authorityStart, pathStart) ?? pathStart;
  const host = url.slice(authorityStart, portStart);
  // Pinned: a fixed domain of two labels or more after the host's last variable (`{tenant}.example.com`).
  const pinned = /^\.[^.{}]+\.[^.{}]+/.test(host.slice(host.lastIndexOf('}') + 1));
  let place: 'path' | 'authority' | 'free_host' = 'path';
  const placeholder = `{${name}}`;
  for (let at = url.indexOf(placeholder); at >= 0; at = url.indexOf(placeholder, at + 1)) {
    if (at >= authorityStart && at < portStart && !pinned) {
      return 'free_host';
    }
    if (at < pathStart) {
      place = 'authority';
    }
  }
  return place;
}

/** The first `char` of `url` outside a `{variable}` between `from` and `to`. */
function literalIndex(url: string, char: string, from: number, to = url.length): number | undefined {
  let depth = 0;
  for (let i = from; i < to; i += 1) {
    const c = url[i];
    if (c === '{') {
      depth += 1;
    } else if (c === '}') {
      depth -= 1;
    } else if (c === char && depth === 0) {
      return i;
    }
  }
  return undefined;
}

/**
 * The server URL of a template with the given values (the defaults for the others), without a trailing
 * slash; a value the template refuses (serverVariableProblem) throws with the reason.
 */
export function resolveServer(template: ServerTemplate, values: Record<string, string>): string {
  const url = template.url.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
    const variable = template.variables[name];
    if (!variable) {
      return whole;
    }
    const value = values[name];
    if (value === undefined) {
      return variable.default;
    }
    const problem = serverVariableProblem(template, name, value);
    if (problem !== undefined) {
      throw new ServerVariableError(problem);
    }
    return value;
  });
  return url.replace(/\/+$/, '');
}

export class ServerVariableError extends Error {}
