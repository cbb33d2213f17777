import { Ajv2020 } from 'ajv/dist/2020.js';
import { type DefinableFunction, functionDefinition } from './function-definition.js';

/**
 * What the LLM providers accept of a tool definition, checked locally:
 * - the name: OpenAI refuses tool names past 64 characters or with characters outside `[A-Za-z0-9_-]`,
 *   Anthropic the same; MCP clients that prefix `mcp__<server>__` refuse past 64 in all, which is why
 *   generated names stop at `maxName` (48 for OpenAPI imports);
 * - the parameters: a JSON Schema of type object that compiles as draft 2020-12, without the keywords
 *   OpenAI's function calling refuses or that are not JSON Schema at all (`oneOf` is written as `anyOf`;
 *   `visible`, `nullable`, `readOnly` and `discriminator` are the catalogue's or OpenAPI's own).
 */
export const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const REFUSED_KEYWORDS = ['oneOf', 'visible', 'nullable', 'readOnly', 'discriminator'] as const;
const VALUE_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);

/**
 * Compiled schemas are dropped after each check, and the compiler itself is replaced every
 * COMPILER_CHECKS checks: Ajv keeps what compiled code referred to (its value scope) after
 * `removeSchema`, and one instance checking the APIs.guru directory's 119,348 schemas ran out of a
 * 4 GB heap (2026-11-28).
 */
const COMPILER_CHECKS = 1000;

export class ProviderRules {
  private ajv = newCompiler();
  private checks = 0;

  constructor(private readonly maxName = 64) {}

  /** The reasons the function's OpenAI and Anthropic definitions would be refused; empty when none. */
  violations(fn: DefinableFunction): string[] {
    const problems: string[] = [];
    if (!PROVIDER_NAME.test(fn.name) || fn.name.length > this.maxName) {
      problems.push(`name ${JSON.stringify(fn.name)}: not 1-${this.maxName} characters of [A-Za-z0-9_-]`);
    }
    const openai = functionDefinition(fn, 'openai');
    const anthropic = functionDefinition(fn, 'anthropic');
    const schema = 'function' in openai ? openai.function.parameters : undefined;
    const input = 'input_schema' in anthropic ? anthropic.input_schema : undefined;
    if (!schema || JSON.stringify(schema) !== JSON.stringify(input)) {
      problems.push('the OpenAI and Anthropic definitions do not carry the same schema');
    }
    if (!schema || schema.type !== 'object') {
      problems.push('parameters: not a schema of type object');
      return problems;
    }
    if (++this.checks % COMPILER_CHECKS === 0) {
      this.ajv = newCompiler();
    }
    try {
      const validate = this.ajv.compile(schema);
      this.ajv.removeSchema(validate.schema);
    } catch (error) {
      problems.push(`parameters: not a draft 2020-12 JSON Schema (${(error as Error).message})`);
    }
    for (const keyword of refusedKeywords(schema)) {
      problems.push(`parameters: keyword ${keyword}`);
    }
    return problems;
  }
}

function newCompiler(): Ajv2020 {
  return new Ajv2020({ strict: false, validateFormats: false });
}

/** The refused keywords used anywhere in a schema (as keys of a schema object, not as property names). */
function refusedKeywords(schema: unknown): Set<string> {
  const found = new Set<string>();
  const walk = (node: unknown, isPropertyMap: boolean): void => {
    if (Array.isArray(node)) {
      node.forEach((item) => walk(item, false));
      return;
    }
    if (!node || typeof node !== 'object') {
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (!isPropertyMap && (REFUSED_KEYWORDS as readonly string[]).includes(key)) {
        found.add(key);
      }
      if (!isPropertyMap && VALUE_KEYWORDS.has(key)) {
        // Values, not schemas: their keys mean nothing to a provider.
        continue;
      }
      // Under `properties` (and its like) the keys are parameter names, which may be anything.
      walk(value, !isPropertyMap && (key === 'properties' || key === 'patternProperties' || key === '$defs'));
    }
  };
  walk(schema, false);
  return found;
}
