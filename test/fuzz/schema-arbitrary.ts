import fc from 'fast-check';

type Schema = Record<string, any>;

/**
 * fast-check arbitraries for the OpenAPI 3.0 schemas of the committed document. Written here because
 * the JSON-Schema converters on npm are 0.x packages that do not know OpenAPI's `nullable`; the
 * document uses a small subset (types, enum, formats, bounds, $ref, allOf/oneOf), all covered.
 */
export class SchemaArbitraries {
  constructor(private readonly schemas: Record<string, Schema>) {}

  /** Values the schema allows. */
  valid(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const resolved = this.resolve(schema);
    const base = this.validBase(resolved, depth);
    return resolved.nullable ? fc.oneof(base, fc.constant(null)) : base;
  }

  /** Mostly valid values, sometimes anything at all (wrong types, hostile strings). */
  mixed(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    return fc.oneof({ arbitrary: this.valid(schema, depth), weight: 4 }, { arbitrary: hostileValue(), weight: 1 });
  }

  resolve(schema: Schema): Schema {
    if (typeof schema.$ref === 'string') {
      return this.resolve(this.schemas[schema.$ref.split('/').pop() as string]);
    }
    if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
      return { ...this.resolve(schema.allOf[0] as Schema), ...withoutKey(schema, 'allOf') };
    }
    return schema;
  }

  private validBase(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    if (Array.isArray(schema.enum)) {
      return fc.constantFrom(...(schema.enum as unknown[]));
    }
    if (Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf)) {
      const options = (schema.oneOf ?? schema.anyOf) as Schema[];
      return fc.oneof(...options.map((option) => this.valid(option, depth + 1)));
    }
    switch (schema.type) {
      case 'string':
        return validString(schema);
      case 'integer':
        return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
      case 'number':
        return fc.double({ noNaN: true, noDefaultInfinity: true });
      case 'boolean':
        return fc.boolean();
      case 'array':
        return depth > 4
          ? fc.constant([])
          : fc.array(this.valid((schema.items ?? {}) as Schema, depth + 1), {
              maxLength: Math.min(schema.maxItems ?? 4, 4),
            });
      case 'object':
        return this.validObject(schema, depth);
      default:
        return depth > 4 ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
    }
  }

  private validObject(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const required = (schema.required ?? []) as string[];
    if (depth > 4 || Object.keys(properties).length === 0) {
      return schema.additionalProperties === false
        ? fc.constant({})
        : fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
    }
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, property] of Object.entries(properties)) {
      record[name] = this.valid(property, depth + 1);
    }
    return fc.record(record, { requiredKeys: required.filter((name) => name in record) });
  }
}

function withoutKey(schema: Schema, key: string): Schema {
  const copy = { ...schema };
  delete copy[key];
  return copy;
}

function validString(schema: Schema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc
        .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
        .map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl({ validSchemes: ['http', 'https'] });
    default: {
      const minLength = schema.minLength ?? 0;
      const maxLength = Math.min(schema.maxLength ?? 40, 40);
      return fc.string({ minLength, maxLength: Math.max(minLength, maxLength), unit: 'grapheme' });
    }
  }
}

/** What a hostile client sends: NUL and control characters, huge numbers, wrong types, deep values. */
export function hostileValue(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom('\u0000', 'a\u0000b', '%00', '../../etc/passwd', "' OR 1=1 --", '{{7*7}}', '\uFFFF', '\uD800'),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom(2 ** 53 + 1, -(2 ** 63), 1e308, -0, 0.5, '9223372036854775808', '-1', '1e3'),
    fc.boolean(),
    fc.constant(null),
    fc.jsonValue({ maxDepth: 3 }),
  );
}

/** Text for a query or path value: valid renderings of the schema, or hostile text. */
export function hostileText(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom('\u0000', 'a\u0000b', '-1', '99999999999999999999', '0001-01-01T00:00:00Z', 'true', '', ' '),
    fc.string({ unit: 'binary', maxLength: 30 }),
  );
}
