import { Injectable } from '@nestjs/common';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { hiddenRequired, type Subschema, subschemas, visibleParameters } from '../catalog-rules/visible-parameters.js';
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
  /** Validators of the visible part of anyOf/oneOf branches, by JSON Pointer, compiled when first needed. */
  branches: Map<string, { schema: Json; validate: ValidateFunction }>;
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
    const compiled = this.validator(fn);
    if (!compiled.validate(input)) {
      throw new FunctionInputInvalidError(fn.name, describeErrors(compiled.validate.errors ?? []));
    }
    fillInvisibleDefaults(fn.parameters, input, (branch, pointer, value) =>
      this.branchValidator(compiled, branch, pointer)(value),
    );
    return dropNulls(input, fn.parameters) as Json;
  }

  private validator(fn: FunctionSchemaSource): CompiledValidator {
    const cached = this.validators.get(fn.name);
    if (cached?.hash === fn.content_hash) {
      return cached;
    }
    if (cached) {
      // ajv keeps every compiled schema; drop the old ones so catalogue updates do not accumulate.
      this.ajv.removeSchema(cached.schema);
      for (const branch of cached.branches.values()) {
        this.ajv.removeSchema(branch.schema);
      }
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
    const compiled: CompiledValidator = { hash: fn.content_hash, schema, validate, branches: new Map() };
    this.validators.set(fn.name, compiled);
    return compiled;
  }

  /** The visible part of the anyOf/oneOf branch at `pointer`, compiled once per content hash. */
  private branchValidator(compiled: CompiledValidator, branch: Json, pointer: string): ValidateFunction {
    let entry = compiled.branches.get(pointer);
    if (!entry) {
      const schema = visibleParameters(branch);
      delete schema.$id;
      let validate: ValidateFunction;
      try {
        validate = this.ajv.compile(schema);
      } catch {
        // A branch that only compiles within the whole (a $ref to the root, say) matches nothing.
        validate = Object.assign(() => false, { errors: null }) as unknown as ValidateFunction;
      }
      entry = { schema, validate };
      compiled.branches.set(pointer, entry);
    }
    return entry.validate;
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

/** What fillInvisibleDefaults reads of one schema node: its hidden required properties and its subschemas. */
interface NodeShape {
  hidden: string[];
  subschemas: Subschema[];
}

/**
 * Each node's shape, worked out on the first execution that reaches it: a function's schema is the same object
 * for as long as ExecutionCache holds its row, and nothing changes it. Walking it afresh per execution (a list
 * and a pointer string per subschema) was about 1 % of the execute path's main-thread time at concurrency 64.
 */
const shapes = new WeakMap<Json, NodeShape>();

function shapeOf(schema: Json): NodeShape {
  let shape = shapes.get(schema);
  if (shape === undefined) {
    shape = { hidden: hiddenRequired(schema), subschemas: subschemas(schema) };
    shapes.set(schema, shape);
  }
  return shape;
}

/** Whether `value` satisfies the visible part of the branch at `pointer` (a JSON Pointer into the parameters). */
export type BranchMatcher = (branch: Json, pointer: string, value: unknown) => boolean;

/**
 * Required properties that the caller cannot see take their `default`; an invisible required
 * object without a default is created so that its own defaults can be filled. Applied at every
 * depth of the input that is present, through every subschema `subschemas` walks: properties,
 * additionalProperties, array items, every allOf branch, and the anyOf/oneOf branches the input
 * matches (the first one for oneOf).
 */
export function fillInvisibleDefaults(schema: unknown, value: unknown, matches: BranchMatcher, pointer = ''): void {
  if (!isObject(schema)) {
    return;
  }
  const shape = shapeOf(schema);
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const name of shape.hidden) {
      if (value[name] !== undefined) {
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
  let oneOfFilled = false;
  for (const { node, pointer: step, place } of shape.subschemas) {
    const at = `${pointer}/${step}`;
    switch (place.kind) {
      case 'property':
        if (isObject(value) && value[place.name] !== undefined) {
          fillInvisibleDefaults(node, value[place.name], matches, at);
        }
        break;
      case 'additionalProperties':
        if (isObject(value)) {
          const named = isObject(schema.properties) ? schema.properties : {};
          for (const [name, child] of Object.entries(value)) {
            if (!(name in named)) {
              fillInvisibleDefaults(node, child, matches, at);
            }
          }
        }
        break;
      case 'items':
        if (Array.isArray(value)) {
          const elements = place.index === undefined ? value : value.slice(place.index, place.index + 1);
          for (const element of elements) {
            fillInvisibleDefaults(node, element, matches, at);
          }
        }
        break;
      case 'allOf':
        fillInvisibleDefaults(node, value, matches, at);
        break;
      case 'anyOf':
      case 'oneOf':
        if ((place.kind === 'anyOf' || !oneOfFilled) && matches(node, at, value)) {
          oneOfFilled ||= place.kind === 'oneOf';
          fillInvisibleDefaults(node, value, matches, at);
        }
        break;
    }
  }
}

/**
 * Removes null-valued properties at every depth (array elements are kept, their contents cleaned): a
 * null means "not given", as providers' strict modes send it for optional fields. A property the
 * schema both requires and allows to be null keeps its null: there it can only mean null.
 */
export function dropNulls(value: unknown, schema?: unknown): unknown {
  const node = isObject(schema) ? schema : {};
  if (Array.isArray(value)) {
    return value.map((item) => dropNulls(item, node.items));
  }
  if (isObject(value)) {
    const properties = isObject(node.properties) ? node.properties : {};
    const required = Array.isArray(node.required) ? node.required : [];
    const out: Json = {};
    for (const [key, child] of Object.entries(value)) {
      if (child !== null) {
        out[key] = dropNulls(child, properties[key]);
      } else if (required.includes(key) && allowsNull(properties[key])) {
        out[key] = null;
      }
    }
    return out;
  }
  return value;
}

function allowsNull(schema: unknown): boolean {
  return isObject(schema) && (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null')));
}
