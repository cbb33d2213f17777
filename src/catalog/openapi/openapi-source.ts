import { bundle, compileErrors, dereference, parse, validate, type ParserOptions } from '@readme/openapi-parser';
import swagger2openapi from 'swagger2openapi';
import { OpenApiRefusal } from './openapi-mapping.js';
import { BRANCH_VALUES, isNode } from './openapi-schema.js';
import './openapi-validators.js';

type Node = Record<string, unknown>;

/**
 * Remote references are never fetched (offline, and no SSRF through a document): only the file
 * itself and files beside it are read. Circular references are kept as object cycles.
 */
const PARSER_OPTIONS: ParserOptions = {
  resolve: { external: true, file: true, http: false } as unknown as ParserOptions['resolve'],
  dereference: { circular: true },
};

export interface LoadedDocument {
  /** OpenAPI 3.x, dereferenced. */
  document: Node;
  /** The version the file was written in ("2.0", "3.0.3", "3.1.0"). */
  sourceVersion: string;
}

/**
 * Reads one OpenAPI 3.x or Swagger 2.0 file (JSON or YAML), validates it, brings in the files it
 * references, converts Swagger 2.0 to OpenAPI 3.0 and dereferences it.
 *
 * Bundling is skipped when the document has no external reference: the library's bundler is slow
 * on large single-file documents (minutes on the largest of the APIs.guru directory).
 */
export async function loadOpenApiDocument(file: string, options: { validate?: boolean } = {}): Promise<LoadedDocument> {
  let document: Node;
  try {
    document = (await parse(file, PARSER_OPTIONS)) as unknown as Node;
  } catch (error) {
    throw new OpenApiRefusal(`cannot be parsed: ${firstLine(error)}`);
  }
  if (!isNode(document)) {
    throw new OpenApiRefusal('is not an OpenAPI document');
  }
  const version = document.openapi ?? document.swagger;
  const sourceVersion = typeof version === 'string' || typeof version === 'number' ? String(version) : '';
  if (!/^(2\.0|3\.[01](\.\d+)?)$/.test(sourceVersion)) {
    throw new OpenApiRefusal(
      sourceVersion
        ? `OpenAPI version "${sourceVersion}" is not supported (Swagger 2.0, OpenAPI 3.0 and 3.1 are)`
        : 'is not an OpenAPI document: it has no "openapi" or "swagger" version',
    );
  }
  const external = externalReferences(document);
  const remote = external.find((ref) => /^[a-z][a-z0-9+.-]*:/i.test(ref) && !ref.startsWith('file:'));
  if (remote) {
    throw new OpenApiRefusal(`references ${remote}: remote references are not fetched`);
  }
  try {
    if (external.length > 0) {
      document = (await bundle(file, PARSER_OPTIONS)) as unknown as Node;
    }
  } catch (error) {
    throw new OpenApiRefusal(`a reference cannot be resolved: ${firstLine(error)}`);
  }
  if (options.validate !== false) {
    const result = await validate(structuredClone(document) as never, PARSER_OPTIONS);
    if (!result.valid) {
      throw new OpenApiRefusal(`is not valid ${result.specification ?? 'OpenAPI'}: ${compileErrors(result).trim()}`);
    }
  }
  if (sourceVersion === '2.0') {
    try {
      const converted = await swagger2openapi.convertObj(document as never, { patch: true, warnOnly: true });
      document = converted.openapi as unknown as Node;
    } catch (error) {
      throw new OpenApiRefusal(`cannot be converted from Swagger 2.0: ${firstLine(error)}`);
    }
  }
  try {
    document = await dereference(document as never, PARSER_OPTIONS);
  } catch (error) {
    throw new OpenApiRefusal(`a reference cannot be resolved: ${firstLine(error)}`);
  }
  markDiscriminators(document);
  return { document, sourceVersion };
}

/**
 * For every `discriminator` beside a `oneOf` or `anyOf`, the values its property takes in each branch:
 * the `mapping` entries that point to the branch, or else the branch's name under
 * `components/schemas` (the specification's implicit mapping). Read after dereferencing, where a
 * reference and its target are one object; left on the discriminator under BRANCH_VALUES.
 */
function markDiscriminators(document: Node): void {
  const components = isNode(document.components) ? document.components : {};
  const named = Object.entries(isNode(components.schemas) ? components.schemas : {});
  const target = (ref: string): unknown => {
    const pointer = ref.startsWith('#/') ? ref.slice(2) : `components/schemas/${ref}`;
    let node: unknown = document;
    for (const part of pointer.split('/')) {
      node = isNode(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    }
    return node;
  };
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) {
      return;
    }
    seen.add(value);
    const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
    const node = value as Node;
    const branches = Array.isArray(node.oneOf) ? node.oneOf : Array.isArray(node.anyOf) ? node.anyOf : undefined;
    if (
      !Array.isArray(value) &&
      isNode(node.discriminator) &&
      typeof node.discriminator.propertyName === 'string' &&
      branches
    ) {
      const mapping = Object.entries(isNode(node.discriminator.mapping) ? node.discriminator.mapping : {});
      node.discriminator[BRANCH_VALUES] = branches.map((branch) => {
        const mapped = mapping
          .filter(([, ref]) => typeof ref === 'string' && target(ref) === branch)
          .map(([name]) => name);
        const implicit = named.find(([, schema]) => schema === branch)?.[0];
        return mapped.length > 0 ? mapped : implicit === undefined ? [] : [implicit];
      });
    }
    children.forEach(visit);
  };
  visit(document);
}

/** `$ref` values that point outside the document (anything not starting with `#`). */
function externalReferences(root: unknown): string[] {
  const found = new Set<string>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
    } else if (isNode(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') {
          if (!value.startsWith('#')) {
            found.add(value);
          }
        } else if (typeof value === 'object' && value !== null) {
          stack.push(value);
        }
      }
    }
  }
  return [...found].sort();
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}
