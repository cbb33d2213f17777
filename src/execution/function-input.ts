import { Injectable } from '@nestjs/common';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { visibleParameters } from '../functions/visible-parameters.js';
import { ExecutionFailure, FunctionInputInvalidError } from './execution.errors.js';

type Json = Record<string, unknown>;

// ajv-formats is CommonJS: imported from ESM, the plugin is the module's `default` member.
const addFormats = addFormatsModule.default;

export interface FunctionSchemaSource {
  name: string;
  content_hash: string;
  parameters: Json;
}

interface CompiledValidator {
  hash: string;
  schema: Json;
  validate: ValidateFunction;
}

/**
 * The shared pipeline for every function: validate the input against the parameters the caller may
 * set (the visible schema), fill required-but-invisible parameters from their defaults, drop nulls.
 * Validators are compiled once per function and replaced when its content hash changes.
 */
@Injectable()
export class FunctionInputs {
  private readonly ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  private readonly validators = new Map<string, CompiledValidator>();

  constructor() {
    addFormats(this.ajv);
  }

  /** Throws FunctionInputInvalidError listing every violation; returns the input ready to send. */
  prepare(fn: FunctionSchemaSource, input: Json): Json {
    const validate = this.validator(fn);
    if (!validate(input)) {
      throw new FunctionInputInvalidError(fn.name, describeErrors(validate.errors ?? []));
    }
    fillInvisibleDefaults(fn.parameters, input);
    return dropNulls(input) as Json;
  }

  private validator(fn: FunctionSchemaSource): ValidateFunction {
    const cached = this.validators.get(fn.name);
    if (cached?.hash === fn.content_hash) {
      return cached.validate;
    }
    if (cached) {
      // ajv keeps every compiled schema; drop the old one so catalogue updates do not accumulate.
      this.ajv.removeSchema(cached.schema);
    }
    const schema = visibleParameters(fn.parameters);
    delete schema.$id;
    let validate: ValidateFunction;
    try {
      validate = this.ajv.compile(schema);
    } catch (error) {
      throw new ExecutionFailure(
        `The catalogue's parameter schema of ${fn.name} is not valid JSON Schema: ${(error as Error).message}`,
      );
    }
    this.validators.set(fn.name, { hash: fn.content_hash, schema, validate });
    return validate;
  }
}

/** One line per violation: where in function_input, and why. */
export function describeErrors(errors: ErrorObject[]): string[] {
  const lines = new Set<string>();
  for (const error of errors) {
    const at = inputPath(error.instancePath);
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'required':
        lines.add(`${join(at, String(params.missingProperty))}: is required`);
        break;
      case 'additionalProperties':
        lines.add(`${join(at, String(params.additionalProperty))}: is not an accepted parameter`);
        break;
      case 'enum':
        lines.add(
          `${at}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
        );
        break;
      default:
        lines.add(`${at}: ${error.message ?? 'is invalid'}`);
    }
  }
  return [...lines];
}

/** `/body/items/0/name` → `function_input.body.items[0].name`. */
function inputPath(pointer: string): string {
  let path = 'function_input';
  if (!pointer) {
    return path;
  }
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path += /^\d+$/.test(part) ? `[${part}]` : `.${part}`;
  }
  return path;
}

function join(path: string, property: string): string {
  return `${path}.${property}`;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Required properties that the caller cannot see take their `default`; an invisible required
 * object without a default is created so that its own defaults can be filled. Applied at every
 * depth of the input that is present, including objects inside arrays.
 */
export function fillInvisibleDefaults(schema: unknown, value: unknown): void {
  if (!isObject(schema)) {
    return;
  }
  if (Array.isArray(value)) {
    if (isObject(schema.items)) {
      for (const item of value) {
        fillInvisibleDefaults(schema.items, item);
      }
    }
    return;
  }
  if (!isObject(value) || !isObject(schema.properties)) {
    return;
  }
  const properties = schema.properties;
  if (Array.isArray(schema.visible) && Array.isArray(schema.required)) {
    const visible = new Set(schema.visible);
    for (const name of schema.required) {
      if (typeof name !== 'string' || visible.has(name) || value[name] !== undefined) {
        continue;
      }
      const property = properties[name];
      if (isObject(property) && 'default' in property) {
        value[name] = structuredClone(property.default);
      } else if (isObject(property) && (property.type === 'object' || isObject(property.properties))) {
        value[name] = {};
      }
    }
  }
  for (const [name, child] of Object.entries(value)) {
    if (isObject(properties[name])) {
      fillInvisibleDefaults(properties[name], child);
    }
  }
}

/** Removes null-valued properties at every depth (array elements are kept, their contents cleaned). */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(dropNulls);
  }
  if (isObject(value)) {
    const out: Json = {};
    for (const [key, child] of Object.entries(value)) {
      if (child !== null) {
        out[key] = dropNulls(child);
      }
    }
    return out;
  }
  return value;
}
