import type { FunctionFile } from '../catalog-files.js';
import { operationKey } from './openapi-names.js';
import {
  type BodyRule,
  defaultExplode,
  defaultStyle,
  isTextual,
  OPENAPI_WIRE_VERSION,
  type OpenApiWire,
  type ParameterRule,
  type ParameterSection,
  type ParameterStyle,
} from '../../functions/openapi-wire.js';
import { cleanText, isNode, mergeAllOf, toCatalogSchema } from './openapi-schema.js';

type Node = Record<string, unknown>;

const FORM = 'application/x-www-form-urlencoded';
const MULTIPART = 'multipart/form-data';
const SECTIONS = ['path', 'query', 'header', 'cookie'] as const;
/**
 * Header parameters OpenAPI says SHALL be ignored (the body's media type, the response's and the
 * security scheme decide them), and those the HTTP client sets itself.
 */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
// A `User-Agent` the document declares is the caller's to give (Apple's media intents require
// `AppleCloudExtension/…`); Patchbay's own goes out when none is given.
const CLIENT_HEADERS = new Set(['content-length', 'cookie']);

export interface Operation {
  method: string;
  path: string;
  op: Node;
  pathItem: Node;
}

/**
 * A function, or the reason the operation cannot become one. What the operation imports in a
 * reduced form (an optional body in a media type Patchbay cannot send, say) is added to `reduced`.
 */
export function buildFunction(
  { method, path, op, pathItem }: Operation,
  name: string,
  serverUrl: string,
  reduced: string[] = [],
): FunctionFile | string {
  const parameters = mergedParameters(pathItem, op);
  const top: Node = { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false };
  const topProperties = top.properties as Node;
  const wire: OpenApiWire = { v: OPENAPI_WIRE_VERSION };
  for (const section of SECTIONS) {
    const group: Node = { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false };
    const groupProperties = group.properties as Node;
    for (const parameter of parameters.filter((p) => p.in === section)) {
      const paramName = parameter.name as string;
      const lower = paramName.toLowerCase();
      if (section === 'header' && IGNORED_HEADERS.has(lower)) {
        continue;
      }
      if (section === 'header' && CLIENT_HEADERS.has(lower)) {
        reduced.push(`header parameter "${paramName}" left out: the HTTP client sets it`);
        continue;
      }
      const schema = parameterSchema(parameter);
      if (schema === undefined) {
        if (parameter.required === true) {
          return `parameter "${paramName}" in ${section} has no schema`;
        }
        reduced.push(`parameter "${paramName}" in ${section} left out: it has no schema`);
        continue;
      }
      if (section === 'query' && parameter.allowEmptyValue !== true) {
        refuseEmptyText(schema);
        if (parameter.required === true) {
          refuseEmptyList(schema);
        }
      }
      groupProperties[paramName] = schema;
      const rule = parameterRule(section, parameter);
      if (rule) {
        ((wire.parameters ??= {})[section] ??= {})[paramName] = rule;
      }
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

  const body = isNode(op.requestBody) ? op.requestBody : undefined;
  if (body) {
    const mapped = mapBody(body);
    if (typeof mapped === 'string') {
      if (body.required === true) {
        return mapped;
      }
      reduced.push(`optional request body left out: ${mapped}`);
    } else {
      wire.body = mapped.rule;
      addSection(top, topProperties, 'body', mapped.schema, body.required === true);
    }
  }

  const summary = cleanText(op.summary, 200);
  const details = cleanText(op.description, 600);
  const description =
    [summary, details && details !== summary ? details : '']
      .filter(Boolean)
      .join('. ')
      .replace(/\.\.\s/g, '. ') || operationKey({ method, path });
  // APIs.guru tells operations on one path apart with a fragment (`/#Action=Describe`): it is not sent.
  const httpPath = path.replace(/#.*$/s, '');
  const protocolData: Node = { method: method.toUpperCase(), path: httpPath, server_url: serverUrl, openapi: wire };
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

/**
 * A query parameter without `allowEmptyValue: true` may not be sent empty (OpenAPI 3.0.3 and 3.1,
 * Parameter Object: its default is false), and a required one may not be left out: a text value must
 * then have at least one character. A default or enum value of `""` (which some documents declare
 * all the same) is dropped, so that it is never offered as the value to send.
 */
function refuseEmptyText(schema: Node): void {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const values = Array.isArray(schema.enum) ? schema.enum.filter((value) => value !== '') : undefined;
  // An enum of only `""` says the value is empty: the document contradicts itself, and is left as it is.
  if (!types.includes('string') || values?.length === 0) {
    return;
  }
  if (schema.default === '') {
    delete schema.default;
  }
  if (values) {
    // The enum's other values are the choice: none of them is empty.
    schema.enum = values;
  } else if (!('const' in schema) && !(typeof schema.minLength === 'number' && schema.minLength >= 1)) {
    schema.minLength = 1;
  }
}

/**
 * A required query parameter may not be left out: an empty list or object, which writes no value (or an
 * empty one), is refused as an empty text is (`minItems: 1`, `minProperties: 1`).
 */
function refuseEmptyList(schema: Node): void {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('array') && !(typeof schema.minItems === 'number' && schema.minItems >= 1)) {
    schema.minItems = 1;
  }
  if (types.includes('object') && !(typeof schema.minProperties === 'number' && schema.minProperties >= 1)) {
    schema.minProperties = 1;
  }
}

/** A parameter's style, explode, allowReserved and content media type, when they differ from the defaults. */
function parameterRule(section: ParameterSection, parameter: Node): ParameterRule | undefined {
  const rule: ParameterRule = {};
  if (isNode(parameter.content) && parameter.schema === undefined) {
    const mediaType = Object.keys(parameter.content)[0];
    if (mediaType !== undefined) {
      rule.content_type = mediaType;
    }
  } else {
    const style = parameter['x-collectionFormat'] === 'tsv' ? 'tabDelimited' : parameter.style;
    if (typeof style === 'string' && STYLES.has(style) && style !== defaultStyle(section)) {
      rule.style = style as ParameterStyle;
    }
    const explode = typeof parameter.explode === 'boolean' ? parameter.explode : undefined;
    if (explode !== undefined && explode !== defaultExplode(rule.style ?? defaultStyle(section))) {
      rule.explode = explode;
    }
    if (parameter.allowReserved === true && section === 'query') {
      rule.allow_reserved = true;
    }
  }
  return Object.keys(rule).length > 0 ? rule : undefined;
}

const STYLES = new Set<string>([
  'simple',
  'label',
  'matrix',
  'form',
  'spaceDelimited',
  'pipeDelimited',
  'deepObject',
  'tabDelimited',
]);

/**
 * The media type sent when an operation offers several: JSON first (`application/json`, then other
 * JSON types), then a form, multipart, text and binary; anything else cannot be sent.
 */
const MEDIA_PREFERENCE: ((type: string) => boolean)[] = [
  (type) => /^application\/json\s*(;|$)/i.test(type),
  (type) => /^application\/([^;]*\+)?json\b/i.test(type),
  (type) => type.toLowerCase().startsWith(FORM),
  (type) => type.toLowerCase().startsWith(MULTIPART),
  (type) => type === '*/*',
  (type) => /^text\/plain\b/i.test(type),
  (type) => isTextual(type),
  (type) => /^application\/octet-stream\b/i.test(type),
  // Any other media type (images, archives, PDF…) is sent as bytes given in base64.
  (type) => /^[\w.+-]+\/[\w.+*-]+/.test(type),
];

/** The body section and its wire rule, or why the body cannot be sent. */
function mapBody(body: Node): { schema: Node; rule: BodyRule } | string {
  const content = isNode(body.content) ? body.content : {};
  const declaredTypes = Object.keys(content);
  // A text or binary body is sent as the string the caller gives: a media type whose schema is built
  // of fields (an XML object, say) cannot be honoured that way, and is not chosen.
  const mediaTypes = declaredTypes.filter((type) => !sentAsGiven(type) || !isStructured(content[type]));
  const chosen = MEDIA_PREFERENCE.map((test) => mediaTypes.find(test)).find((type) => type !== undefined);
  if (chosen === undefined && declaredTypes.length > mediaTypes.length) {
    const structured = declaredTypes
      .filter((type) => !mediaTypes.includes(type))
      .slice(0, 4)
      .join(', ');
    return `request body only as ${structured} described by fields (Patchbay builds JSON, form and multipart bodies from fields; other media types are sent as given text or bytes)`;
  }
  if (chosen === undefined) {
    const listed =
      mediaTypes.length > 4
        ? `${mediaTypes.slice(0, 4).join(', ')} and ${mediaTypes.length - 4} more`
        : mediaTypes.join(', ');
    return `request body only as ${listed || 'no media type'} (JSON, form, multipart, text and binary bodies are supported)`;
  }
  const media = isNode(content[chosen]) ? content[chosen] : {};
  const source = isNode(media.schema) ? mergeAllOf(media.schema) : undefined;
  const rule: BodyRule = { media_type: chosen };
  let schema: Node;
  const lower = chosen.toLowerCase();
  if (lower.startsWith(FORM) || lower.startsWith(MULTIPART)) {
    schema = toCatalogSchema(source);
    if (schema.type !== 'object' || !isNode(schema.properties)) {
      return `the ${chosen} body is not an object of fields (${describeType(schema)})`;
    }
    for (const [name, property] of Object.entries(schema.properties)) {
      // A field the document leaves untyped is text, as every field is on the wire (Twilio's `Channel`, a JSON
      // value, goes as its JSON text): any value would let an empty list or object through, which writes nothing.
      if (isNode(property) && !['type', 'anyOf', 'oneOf', 'enum', 'const'].some((keyword) => keyword in property)) {
        schema.properties[name] = { type: 'string', ...property };
      }
    }
    const encoding = encodingRules(media.encoding);
    if (encoding) {
      rule.encoding = encoding;
    }
    if (lower.startsWith(MULTIPART)) {
      const files = fileProperties(source ?? {}, schema);
      if (files.length > 0) {
        rule.files = files;
      }
    }
  } else if (/json/i.test(chosen) || chosen === '*/*') {
    schema = toCatalogSchema(source);
  } else if (isTextual(chosen)) {
    schema = { type: 'string' };
  } else if (source?.type === 'string' && source.format === 'byte') {
    // The document puts base64 on the wire (`format: byte`): the text given is sent as it is.
    schema = { type: 'string', description: `The ${chosen} content as base64 text, sent as it is` };
    rule.base64_text = true;
  } else {
    schema = { type: 'string', description: `The ${chosen} content, base64-encoded` };
  }
  const text = cleanText(body.description);
  if (!schema.description && text) {
    schema.description = text;
  }
  if (declaredTypes.length > 1) {
    const others = declaredTypes.filter((type) => type !== chosen).join(', ');
    const said = `Sent as ${chosen}${others ? ` (the API also takes ${others})` : ''}.`;
    schema.description = typeof schema.description === 'string' ? `${schema.description} ${said}` : said;
  }
  return { schema, rule };
}

/** A media type whose body Patchbay sends as the caller gives it, text or bytes (not built from fields). */
function sentAsGiven(type: string): boolean {
  const lower = type.toLowerCase();
  return !(lower.startsWith(FORM) || lower.startsWith(MULTIPART) || /json/.test(lower) || lower === '*/*');
}

/** Whether a media type's schema describes fields or items rather than one string of text or bytes. */
function isStructured(media: unknown): boolean {
  const schema = isNode(media) && isNode(media.schema) ? mergeAllOf(media.schema) : undefined;
  if (!schema) {
    return false;
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('object') || types.includes('array') || isNode(schema.properties);
}

/** An Encoding Object per property, as wire rules (style, explode, allowReserved, contentType). */
function encodingRules(encoding: unknown): Record<string, ParameterRule> | undefined {
  if (!isNode(encoding)) {
    return undefined;
  }
  const rules: Record<string, ParameterRule> = {};
  for (const [property, value] of Object.entries(encoding)) {
    if (!isNode(value)) {
      continue;
    }
    const rule: ParameterRule = {};
    if (typeof value.style === 'string' && STYLES.has(value.style)) {
      rule.style = value.style as ParameterStyle;
    }
    if (typeof value.explode === 'boolean') {
      rule.explode = value.explode;
    }
    if (value.allowReserved === true) {
      rule.allow_reserved = true;
    }
    if (typeof value.contentType === 'string' && value.contentType.trim() !== '') {
      rule.content_type = value.contentType.split(',')[0].trim();
    }
    if (Object.keys(rule).length > 0) {
      rules[property] = rule;
    }
  }
  return Object.keys(rules).length > 0 ? rules : undefined;
}

/**
 * Multipart properties that are files (`format: binary`, OpenAPI 3.1's `contentMediaType`, or arrays
 * of them): in the catalogue each becomes `{ base64, filename, media_type }`.
 */
function fileProperties(source: Node, schema: Node): string[] {
  const declared = isNode(source.properties) ? source.properties : {};
  const properties = schema.properties as Node;
  const files: string[] = [];
  for (const name of Object.keys(properties)) {
    const property = isNode(declared[name]) ? declared[name] : {};
    const isArray = isNode(property.items);
    const item = isArray ? (property.items as Node) : property;
    if (item.format === 'binary' || typeof item.contentMediaType === 'string') {
      const file = fileSchema(cleanText(property.description));
      properties[name] = isArray ? { type: 'array', items: file, description: file.description } : file;
      files.push(name);
    }
  }
  return files;
}

function fileSchema(description: string): Node {
  return {
    type: 'object',
    description: `${description ? `${description} ` : ''}A file: its content base64-encoded, its name and media type.`,
    properties: {
      base64: { type: 'string', description: 'The file content, base64-encoded' },
      filename: { type: 'string', description: 'The file name' },
      media_type: { type: 'string', description: 'The media type, e.g. image/png' },
    },
    required: ['base64'],
    visible: ['base64', 'filename', 'media_type'],
    additionalProperties: false,
  };
}

function addSection(top: Node, properties: Node, section: string, group: Node, forceRequired = false): void {
  properties[section] = group;
  (top.visible as string[]).push(section);
  if (forceRequired || (Array.isArray(group.required) && group.required.length > 0)) {
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
