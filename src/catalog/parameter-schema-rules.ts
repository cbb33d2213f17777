import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { hiddenRequired, isSchemaNode, subschemas } from '../catalog-rules/visible-parameters.js';

// ajv-formats is CommonJS: imported from ESM, the plugin is the module's `default` member.
const addFormats = addFormatsModule.default;

/** The one Ajv the catalogue checks with: its file schemas, and every function's parameter schema. */
export const catalogAjv = new Ajv({ allErrors: true, strict: false });
addFormats(catalogAjv);
catalogAjv.addKeyword({ keyword: 'visible', schemaType: 'array' });

/** Where a file breaks a rule: the file, the JSON path in it, and why. */
export interface CatalogProblem {
  file: string;
  path: string;
  reason: string;
}

const REST_SECTIONS = new Set(['path', 'query', 'header', 'cookie', 'body']);

/**
 * The rules of the catalogue's parameter schemas beyond plain JSON Schema: it must compile; `required`
 * and `visible` name existing properties; a required property hidden from the LLM needs a default
 * (objects excepted: their own properties carry the defaults); REST functions group parameters by
 * where they go in the request.
 */
export function parameterSchemaProblems(
  schema: Record<string, unknown>,
  protocol: string,
  file: string,
  at: string,
): CatalogProblem[] {
  const problems: CatalogProblem[] = [];
  const invalid = schemaError(schema);
  if (invalid) {
    problems.push({ file, path: at, reason: `is not a valid JSON Schema: ${invalid}` });
    return problems;
  }
  if (Object.keys(schema).length === 0) {
    return problems; // no parameters at all
  }
  if (schema.type !== 'object') {
    problems.push({ file, path: `${at}/type`, reason: 'must be "object"' });
    return problems;
  }
  if (protocol === 'rest') {
    for (const key of Object.keys((schema.properties as Record<string, unknown>) ?? {})) {
      if (!REST_SECTIONS.has(key)) {
        problems.push({
          file,
          path: `${at}/properties/${key}`,
          reason: 'a REST function has only path, query, header, cookie and body parameters',
        });
      }
    }
  }
  walkObjectNodes(schema, at, (node, path) => {
    const properties = node.properties as Record<string, Record<string, unknown>>;
    const names = new Set(Object.keys(properties));
    const required = (Array.isArray(node.required) ? node.required : []) as string[];
    const visible = (Array.isArray(node.visible) ? node.visible : []) as string[];
    for (const [list, key] of [
      [required, 'required'],
      [visible, 'visible'],
    ] as const) {
      list.forEach((name, i) => {
        if (!names.has(name)) {
          problems.push({ file, path: `${path}/${key}/${i}`, reason: `"${name}" is not a property` });
        }
      });
    }
    for (const name of hiddenRequired(node)) {
      const property = properties[name];
      if (property && property.type !== 'object' && !('default' in property)) {
        problems.push({
          file,
          path: `${path}/properties/${name}`,
          reason: 'is required but not visible, so it needs a default',
        });
      }
    }
  });
  return problems;
}

/**
 * Why `schema` is not a valid JSON Schema, or undefined. Checked against the meta-schema, then for what
 * the meta-schema check leaves out: a `$ref` must resolve (the schema is compiled, which is the only way
 * to resolve it), and a pattern must be a regular expression (each one is compiled as Ajv compiles it).
 * Compiling every schema cost 2.5–6 s per 1,000 functions here against 60–90 ms for the meta-schema check
 * (the ACI catalogue's 987 schemas, measured twice). Compiling the schemas that have a pattern took 390 of
 * the 410 s that Microsoft Graph's description (20 MB, 11,310 functions) spent on the reader thread, and
 * grew that thread's heap past 900 MB (2026-11-27, load average 4–6): its expanded schemas are large and
 * most have a pattern; only the patterns need compiling.
 */
function schemaError(schema: Record<string, unknown>): string | undefined {
  if (!catalogAjv.validateSchema(schema)) {
    return catalogAjv.errorsText(catalogAjv.errors);
  }
  const text = JSON.stringify(schema);
  if (text.includes('"$ref"')) {
    try {
      catalogAjv.compile(schema);
    } catch (error) {
      return (error as Error).message;
    } finally {
      // Ajv keeps every compiled schema (and its $id) for the life of the instance: an import of
      // thousands of documents would hold all their functions' schemas.
      catalogAjv.removeSchema(schema);
    }
    return undefined;
  }
  return text.includes('"pattern') ? patternError(schema) : undefined;
}

/** The keywords whose value is a subschema, and those whose value is a list or map of them (draft-07, as Ajv applies them). */
const SUBSCHEMA_KEYWORDS = [
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];
const SUBSCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf'];
const SUBSCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'dependencies'];

/**
 * The error Ajv's compiler gives for the first `pattern` or `patternProperties` key that is not a
 * regular expression, wherever Ajv applies it (not in `default`, `enum` or examples): Ajv builds each one
 * with `new RegExp(source, 'u')` (its `unicodeRegExp` default), so the same call gives the same message.
 */
function patternError(node: unknown): string | undefined {
  if (!isSchemaNode(node)) {
    return undefined;
  }
  const sources = [
    ...(typeof node.pattern === 'string' ? [node.pattern] : []),
    ...(isSchemaNode(node.patternProperties) ? Object.keys(node.patternProperties) : []),
  ];
  for (const source of sources) {
    try {
      new RegExp(source, 'u');
    } catch (error) {
      return (error as Error).message;
    }
  }
  const children: unknown[] = SUBSCHEMA_KEYWORDS.map((keyword) => node[keyword]);
  for (const keyword of SUBSCHEMA_LIST_KEYWORDS) {
    if (Array.isArray(node[keyword])) {
      children.push(...(node[keyword] as unknown[]));
    }
  }
  for (const keyword of SUBSCHEMA_MAP_KEYWORDS) {
    if (isSchemaNode(node[keyword])) {
      children.push(...Object.values(node[keyword]));
    }
  }
  children.push(...(Array.isArray(node.items) ? (node.items as unknown[]) : [node.items]));
  for (const child of children) {
    const error = patternError(child);
    if (error) {
      return error;
    }
  }
  return undefined;
}

/** Every node with `properties`, at every depth the one walker of parameter schemas reaches. */
function walkObjectNodes(
  node: Record<string, unknown>,
  path: string,
  visit: (node: Record<string, unknown>, path: string) => void,
): void {
  if (isSchemaNode(node.properties)) {
    visit(node, path);
  }
  for (const child of subschemas(node)) {
    walkObjectNodes(child.node, `${path}/${child.pointer}`, visit);
  }
}
