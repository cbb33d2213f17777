import { readFileSync } from 'node:fs';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Record<string, unknown>;
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  parameters: Parameter[];
  /** The body schema's top-level properties, when the operation takes a JSON body. */
  bodyProperties?: string[];
  responses: Record<string, unknown>;
  secured: boolean;
}

type Json = Record<string, any>;

/** The committed OpenAPI document: the contract these tests hold every operation to. */
export const document = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as Json;

export function resolve(schema: Json): Json {
  if (typeof schema.$ref === 'string') {
    return resolve(document.components.schemas[schema.$ref.split('/').pop() as string] as Json);
  }
  return schema;
}

export const operations: Operation[] = Object.entries(document.paths as Json).flatMap(([path, item]) =>
  Object.entries(item as Json).map(([method, operation]: [string, Json]) => {
    const body = operation.requestBody?.content?.['application/json']?.schema as Json | undefined;
    return {
      method: method.toUpperCase(),
      path,
      operationId: operation.operationId as string,
      parameters: (operation.parameters ?? []) as Parameter[],
      bodyProperties: body ? Object.keys(resolve(body).properties ?? {}) : undefined,
      responses: operation.responses as Record<string, unknown>,
      secured: Array.isArray(operation.security) && operation.security.length > 0,
    };
  }),
);

/** The path with every parameter filled with `value`, except `override` given for one of them. */
export function fillPath(operation: Operation, value = 'X', override?: { name: string; value: string }): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(name === override?.name ? override.value : value),
  );
}
