import type { DefinitionFormat, FunctionDefinition } from './functions.dto.js';
import { visibleParameters } from '../catalog-rules/visible-parameters.js';

export interface DefinableFunction {
  name: string;
  description: string;
  /** The catalogue's parameter schema, with its `visible` lists. */
  parameters: Record<string, unknown>;
}

/** A function in one of the LLM tool shapes; only its visible parameters are shown. */
export function functionDefinition(fn: DefinableFunction, format: DefinitionFormat): FunctionDefinition {
  if (format === 'basic') {
    return { name: fn.name, description: fn.description };
  }
  const schema = providerSchema(visibleParameters(fn.parameters));
  switch (format) {
    case 'openai':
      return { type: 'function', function: { name: fn.name, description: fn.description, parameters: schema } };
    case 'openai_responses':
      return { type: 'function', name: fn.name, description: fn.description, parameters: schema };
    case 'anthropic':
      return { name: fn.name, description: fn.description, input_schema: schema };
  }
}

/**
 * The keywords the catalogue keeps from an imported document that the providers refuse, written the
 * way they accept: `oneOf` as `anyOf` (the catalogue validates input with `oneOf` itself, so an input
 * matching two branches is still refused), `discriminator` left out (each branch names its own value).
 * A schema without them is returned as it is, uncopied.
 */
export function providerSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return hasProviderKeywords(schema) ? (rewrite(schema) as Record<string, unknown>) : schema;
}

function hasProviderKeywords(node: unknown): boolean {
  if (Array.isArray(node)) {
    return node.some(hasProviderKeywords);
  }
  if (typeof node !== 'object' || node === null) {
    return false;
  }
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'oneOf' || key === 'discriminator') && !isValueKeyword(key)) {
      return true;
    }
    if (!isValueKeyword(key) && hasProviderKeywords(value)) {
      return true;
    }
  }
  return false;
}

function isValueKeyword(key: string): boolean {
  return key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'example';
}

function rewrite(node: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(node)) {
    return node.map((item) => rewrite(item));
  }
  if (typeof node !== 'object' || node === null) {
    return node;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (isPropertyMap) {
      out[key] = rewrite(value);
    } else if (isValueKeyword(key)) {
      out[key] = value;
    } else if (key === 'discriminator') {
      continue;
    } else if (key === 'oneOf') {
      const branches = rewrite(value);
      if ('anyOf' in node) {
        out.allOf = [...((out.allOf as unknown[]) ?? []), { anyOf: branches }];
      } else {
        out.anyOf = branches;
      }
    } else {
      out[key] = rewrite(value, key === 'properties' || key === 'patternProperties' || key === '$defs');
    }
  }
  return out;
}
