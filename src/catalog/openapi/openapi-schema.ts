type Node = Record<string, unknown>;

/** Nesting below this depth is cut: recursive schemas (kept as object cycles when dereferenced) end here. */
export const MAX_SCHEMA_DEPTH = 6;

/** Formats the catalogue's validator (ajv-formats) knows; any other format is dropped, never guessed. */
const KNOWN_FORMATS = new Set([
  'date',
  'time',
  'date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
]);

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

/** Scalar keywords copied as they are when their value has the right JSON type. */
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'multipleOf'] as const;
const COUNT_KEYWORDS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const;

export interface SchemaContext {
  /** Where the schema is used: request inputs leave `readOnly` properties out. */
  direction: 'request';
}

/**
 * An OpenAPI (3.0 or 3.1) schema object as a catalogue parameter schema: plain JSON Schema that
 * validates under draft 7 and 2020-12 and that the LLM providers accept, with the catalogue's
 * `visible` lists on object nodes.
 *
 * - `allOf` is merged into one object; `oneOf` and `anyOf` stay as they are, with a `oneOf`'s
 *   `discriminator` (the definitions shown to an LLM write them as providers accept, see
 *   providerSchema); `not`, `xml`, examples and extensions are dropped.
 * - `nullable` (3.0) becomes a type list; 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum`
 *   become 2020-12 numbers.
 * - `readOnly` properties are left out (the server sets them); a `pattern` that is not a valid
 *   JavaScript regular expression in unicode mode is kept without its needless escapes of punctuation
 *   (`\-`), else dropped, as is an unknown `format`, rather than breaking validation.
 * - Recursion: a schema met again on its own path, or nesting deeper than MAX_SCHEMA_DEPTH, becomes
 *   an unconstrained value of its type.
 */
export function toCatalogSchema(schema: unknown, depth = 0, ancestors: Set<unknown> = new Set()): Node {
  if (!isNode(schema)) {
    return {};
  }
  if (ancestors.has(schema) || depth > MAX_SCHEMA_DEPTH) {
    return cutSchema(schema);
  }
  ancestors.add(schema);
  try {
    return convert(mergeAllOf(schema), depth, ancestors);
  } finally {
    ancestors.delete(schema);
  }
}

function convert(schema: Node, depth: number, ancestors: Set<unknown>): Node {
  const out: Node = {};
  const types = schemaTypes(schema);
  if (types.length === 1) {
    out.type = types[0];
  } else if (types.length > 1) {
    out.type = types;
  }
  const description = cleanText(schema.description ?? schema.title);
  if (description) {
    out.description = description;
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const values = (schema.enum as unknown[]).filter((value) => value === null || typeof value !== 'object');
    if (values.length > 0) {
      out.enum = types.includes('null') && !values.includes(null) ? [...values, null] : values;
    }
  }
  if ('const' in schema && (schema.const === null || typeof schema.const !== 'object')) {
    out.const = schema.const;
  }
  if ('default' in schema && defaultFits(schema.default, types, out.enum as unknown[] | undefined)) {
    out.default = schema.default;
  }
  if (typeof schema.format === 'string' && KNOWN_FORMATS.has(schema.format)) {
    out.format = schema.format;
  }
  const pattern = typeof schema.pattern === 'string' ? unicodePattern(schema.pattern) : undefined;
  if (pattern !== undefined) {
    out.pattern = pattern;
  }
  for (const keyword of NUMBER_KEYWORDS) {
    if (typeof schema[keyword] === 'number' && Number.isFinite(schema[keyword])) {
      out[keyword] = schema[keyword];
    }
  }
  if (typeof out.multipleOf === 'number' && out.multipleOf <= 0) {
    delete out.multipleOf;
  }
  for (const [keyword, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    const value = schema[keyword];
    if (typeof value === 'number') {
      out[keyword] = value;
    } else if (value === true && typeof out[bound] === 'number') {
      out[keyword] = out[bound];
      delete out[bound];
    }
  }
  for (const keyword of COUNT_KEYWORDS) {
    const value = schema[keyword];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) {
      out[keyword] = value;
    }
  }
  if (schema.uniqueItems === true) {
    out.uniqueItems = true;
  }
  const isObject = types.includes('object') || (types.length === 0 && isNode(schema.properties));
  if (isObject) {
    Object.assign(out, objectNode(schema, depth, ancestors));
    if (types.length === 0) {
      out.type = 'object';
    }
  }
  if (types.includes('array') || (types.length === 0 && schema.items !== undefined)) {
    out.items = isNode(schema.items) ? toCatalogSchema(schema.items, depth + 1, ancestors) : {};
    if (types.length === 0) {
      out.type = 'array';
    }
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (!Array.isArray(branches) || branches.length === 0) {
      continue;
    }
    const converted = branches.filter(isNode).map((branch) => toCatalogSchema(branch, depth + 1, ancestors));
    namesDiscriminatorValues(schema, branches, converted);
    // A branch that allows anything makes the whole choice allow anything.
    if (converted.length > 0 && converted.every((branch) => Object.keys(branch).length > 0)) {
      out[keyword] = converted;
    }
  }
  if (out.oneOf && isNode(schema.discriminator) && typeof schema.discriminator.propertyName === 'string') {
    out.discriminator = { propertyName: schema.discriminator.propertyName };
  }
  return out;
}

function objectNode(schema: Node, depth: number, ancestors: Set<unknown>): Node {
  const properties: Node = {};
  const source = isNode(schema.properties) ? schema.properties : {};
  for (const name of Object.keys(source)) {
    const property = source[name];
    if (isNode(property) && property.readOnly === true) {
      continue;
    }
    properties[name] = toCatalogSchema(property, depth + 1, ancestors);
  }
  const described = Object.keys(properties).length;
  // A required property the schema does not describe is still required: it takes any value.
  const declared = Array.isArray(schema.required)
    ? unique(schema.required.filter((name): name is string => typeof name === 'string'))
    : [];
  for (const name of declared) {
    if (!(name in source)) {
      properties[name] = {};
    }
  }
  const names = Object.keys(properties);
  const required = declared.filter((name) => name in properties);
  let additional: unknown = described === 0;
  if (schema.additionalProperties === false) {
    additional = false;
  } else if (isNode(schema.additionalProperties) && described === 0) {
    additional = toCatalogSchema(schema.additionalProperties, depth + 1, ancestors);
  }
  return { properties, required, visible: names, additionalProperties: additional };
}

/**
 * A discriminator names, for each branch, the values its property takes there (the values
 * `markDiscriminators` found): each converted branch states them as an `enum` of that property, and
 * requires it, so that an input naming another value is refused as the document's readers refuse it.
 */
function namesDiscriminatorValues(schema: Node, branches: unknown[], converted: Node[]): void {
  const discriminator = isNode(schema.discriminator) ? schema.discriminator : undefined;
  const property = discriminator?.propertyName;
  const values = discriminator?.[BRANCH_VALUES];
  if (typeof property !== 'string' || !Array.isArray(values)) {
    return;
  }
  const aligned: unknown[] = (values as unknown[]).filter((_, i) => isNode(branches[i]));
  converted.forEach((branch, i) => {
    const names = aligned[i];
    if (!Array.isArray(names) || names.length === 0 || !isNode(branch.properties)) {
      return;
    }
    const own = isNode(branch.properties[property]) ? branch.properties[property] : { type: 'string' };
    const { default: fallback, ...rest } = own;
    branch.properties[property] = {
      ...rest,
      enum: names,
      ...(names.includes(fallback) ? { default: fallback } : {}),
    };
    for (const list of ['required', 'visible'] as const) {
      const current = Array.isArray(branch[list]) ? (branch[list] as string[]) : [];
      if (!current.includes(property)) {
        branch[list] = [...current, property];
      }
    }
  });
}

/** Where `markDiscriminators` leaves each branch's discriminator values, on the discriminator itself. */
export const BRANCH_VALUES = 'x-patchbay-branch-values';

/** A schema cut short by recursion or depth: its type, and the description so the LLM knows what goes there. */
function cutSchema(cut: Node): Node {
  // The type may come from an `allOf` member (`{ allOf: [{ $ref: Expression }, { description }] }`).
  const schema = mergeAllOf(cut);
  const out: Node = {};
  const types = schemaTypes(schema);
  if (types.length > 0) {
    out.type = types.length === 1 ? types[0] : types;
  }
  const description = cleanText(schema.description ?? schema.title);
  if (description) {
    out.description = description;
  }
  if (types.includes('object') || isNode(schema.properties)) {
    Object.assign(out, { type: out.type ?? 'object', properties: {}, required: [], visible: [] });
    out.additionalProperties = true;
  }
  return out;
}

/** `allOf` folded into its parent: properties and `required` united, the other keywords of the first one that sets them. */
export function mergeAllOf(schema: Node, seen: Set<unknown> = new Set()): Node {
  if (!Array.isArray(schema.allOf) || seen.has(schema)) {
    return schema;
  }
  seen.add(schema);
  const { allOf, ...rest } = schema;
  const merged: Node = { ...rest };
  const properties: Node = isNode(rest.properties) ? { ...rest.properties } : {};
  const required = new Set<string>(Array.isArray(rest.required) ? (rest.required as string[]) : []);
  for (const part of allOf as unknown[]) {
    if (!isNode(part)) {
      continue;
    }
    const flat = mergeAllOf(part, seen);
    for (const [key, value] of Object.entries(flat)) {
      if (key === 'properties' && isNode(value)) {
        for (const [name, property] of Object.entries(value)) {
          properties[name] ??= property;
        }
      } else if (key === 'required' && Array.isArray(value)) {
        value.forEach((name) => typeof name === 'string' && required.add(name));
      } else if (!(key in merged)) {
        merged[key] = value;
      }
    }
  }
  if (Object.keys(properties).length > 0) {
    merged.properties = properties;
    merged.type ??= 'object';
  }
  if (required.size > 0) {
    merged.required = [...required];
  }
  return merged;
}

function schemaTypes(schema: Node): string[] {
  const raw = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  const types = unique(raw.filter((type): type is string => typeof type === 'string' && JSON_TYPES.has(type)));
  if (schema.nullable === true && types.length > 0 && !types.includes('null')) {
    types.push('null');
  }
  return types;
}

function defaultFits(value: unknown, types: string[], allowed: unknown[] | undefined): boolean {
  if (allowed && !allowed.includes(value)) {
    return false;
  }
  if (types.length === 0) {
    return true;
  }
  return types.some((type) => {
    switch (type) {
      case 'null':
        return value === null;
      case 'integer':
        return Number.isInteger(value);
      case 'number':
        return typeof value === 'number';
      case 'string':
        return typeof value === 'string';
      case 'boolean':
        return typeof value === 'boolean';
      case 'array':
        return Array.isArray(value);
      case 'object':
        return isNode(value);
      default:
        return false;
    }
  });
}

function compiles(pattern: string, flags: string): boolean {
  try {
    new RegExp(pattern, flags);
    return true;
  } catch {
    return false;
  }
}

/**
 * The pattern as the catalogue's validator compiles it (`u` flag), without the slashes of an ECMAScript
 * literal around an anchored pattern: as it is when it compiles so;
 * else with its needless escapes of punctuation removed (`\-`, `\_`, `\:`, `\ ` outside a class, `\_`
 * or `\:` inside one), which ECMAScript without the flag, Java and PCRE all read as the character
 * itself, and which the `u` flag refuses. A pattern that still does not compile is dropped.
 */
function unicodePattern(written: string): string | undefined {
  // Written as an ECMAScript literal (`/^\d{4}$/`): anchors inside the slashes match nothing, so they are delimiters.
  const pattern = /^\/(\^.*\$)\/$/s.exec(written)?.[1] ?? written;
  if (compiles(pattern, 'u')) {
    return pattern;
  }
  if (!compiles(pattern, '')) {
    return undefined;
  }
  let inClass = false;
  const rewritten = pattern.replace(/\\([\s\S])|([[\]])/g, (whole, escaped: string | undefined, bracket?: string) => {
    if (bracket !== undefined) {
      inClass = bracket === '[';
      return whole;
    }
    // Letters and digits make escape sequences; syntax characters (and `-` in a class) need their escape.
    const needed = /[A-Za-z0-9$()*+./?[\\\]^{|}]/.test(escaped as string) || (inClass && escaped === '-');
    return needed ? whole : (escaped as string);
  });
  return compiles(rewritten, 'u') ? rewritten : undefined;
}

/**
 * Description text without markup: HTML tags, Markdown links, emphasis and code fences reduced to
 * their words, whitespace collapsed, cut at a word boundary past `limit` characters.
 */
export function cleanText(value: unknown, limit = 300): string {
  if (typeof value !== 'string') {
    return '';
  }
  const text = value
    .replace(/<[^>]*>/g, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/```[a-z]*|`/gi, '')
    .replace(/(\*\*|__|\*)(\S(?:.*?\S)?)\1/g, '$2')
    .replace(/^#+\s*/gm, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length <= limit) {
    return text;
  }
  const cut = text.slice(0, limit);
  const sentence = cut.lastIndexOf('. ');
  if (sentence > limit / 2) {
    return cut.slice(0, sentence + 1);
  }
  const space = cut.lastIndexOf(' ');
  return `${cut.slice(0, space > limit / 2 ? space : limit).trimEnd()}…`;
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

export function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
