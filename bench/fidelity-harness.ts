/**
 * The proof of issue #28, shared by `npm run bench:fidelity` (a stratified sample of the APIs.guru
 * directory) and its test (a fixed sample of about 300 operations): operations are imported from
 * their documents, executed with generated inputs through POST /v1/functions/{name}/execute against
 * a local recording upstream, and every request the upstream received is validated against the
 * operation in its original document by an OpenAPI request validator Patchbay's code does not use
 * (express-openapi-validator, fidelity-oracle.ts).
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';

import { DocumentOracle, MAX_HEADER_SIZE } from './fidelity-oracle.js';
import { isNode, resolve, type SampledOperation } from './fidelity-sample.js';

type Node = Record<string, unknown>;

/** One request as the upstream received it. */
export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A local HTTP server that answers 200 `{}` to everything and records what it received. Its limit on the
 * request line and headers is 1 MB, not Node's 16 KB: a long query string is what some documents allow.
 */
export class RecordingUpstream {
  readonly received: Recorded[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<RecordingUpstream> {
    const server = createServer({ maxHeaderSize: MAX_HEADER_SIZE });
    const upstream = new RecordingUpstream(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        upstream.received.push({
          method: request.method ?? '',
          url: request.url ?? '/',
          headers: request.headers,
          body: Buffer.concat(chunks),
        });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

/** How the harness reaches the Patchbay API under test. */
export interface Api {
  get(path: string): Promise<{ status: number; body: unknown }>;
  post(path: string, body: unknown): Promise<{ status: number; body: unknown }>;
}

export interface FidelityReport {
  operations_sampled: number;
  imported: number;
  not_imported: Record<string, { count: number; example: string }>;
  inputs_generated: number;
  ungeneratable: Record<string, { count: number; example: string }>;
  executed: number;
  requests_valid: number;
  requests_invalid: number;
  valid_percent: number;
  invalid_by_reason: Record<string, { count: number; example: string }>;
  features: Record<string, number>;
}

function count(map: Record<string, { count: number; example: string }>, reason: string, example: string): void {
  const entry: { count: number; example: string; more?: string[] } = (map[reason] ??= { count: 0, example });
  entry.count += 1;
  // FIDELITY_ALL_EXAMPLES=1 lists every case, not only the first.
  if (process.env.FIDELITY_ALL_EXAMPLES === '1' && entry.count > 1) {
    (entry.more ??= []).push(example.slice(0, 300));
  }
}

/** A document prepared for the run: its k, its trimmed original, and its sampled operations in j order. */
export interface PreparedDocument {
  k: number;
  original: Node;
  operations: SampledOperation[];
}

/**
 * Executes every imported operation once with an input generated from its definition (seeded) and
 * validates what the upstream received against the original operation.
 */
export async function runFidelity(
  api: Api,
  ownerId: string,
  upstream: RecordingUpstream,
  documents: PreparedDocument[],
  seed: number,
  onProgress?: (done: number, total: number, label: string) => void,
): Promise<FidelityReport> {
  const report: FidelityReport = {
    operations_sampled: documents.reduce((n, d) => n + d.operations.length, 0),
    imported: 0,
    not_imported: {},
    inputs_generated: 0,
    ungeneratable: {},
    executed: 0,
    requests_valid: 0,
    requests_invalid: 0,
    valid_percent: 0,
    invalid_by_reason: {},
    features: {},
  };
  let done = 0;
  const generator = new InputGenerator();
  try {
    for (const document of documents) {
      const app = `FIDELITY_${document.k}`;
      const configured = await api.post('/v1/app-configurations', { app_name: app, security_scheme: 'no_auth' });
      const linked =
        configured.status < 300
          ? await api.post('/v1/linked-accounts/no-auth', { app_name: app, linked_account_owner_id: ownerId })
          : configured;
      // One judge per document, started when its first request is to be judged.
      let oracle: Promise<DocumentOracle> | undefined;
      try {
        for (const [j, operation] of document.operations.entries()) {
          done += 1;
          for (const feature of operation.features) {
            report.features[feature] = (report.features[feature] ?? 0) + 1;
          }
          const label = `${operation.file} ${operation.method.toUpperCase()} ${operation.path}`;
          onProgress?.(done, report.operations_sampled, label);
          if (linked.status >= 300) {
            count(report.not_imported, 'the document was refused, or none of its sampled operations imported', label);
            continue;
          }
          const name = `${app}__OP${j}`;
          const definition = await api.get(`/v1/functions/${name}/definition?format=openai`);
          if (definition.status !== 200) {
            count(report.not_imported, 'the operation was skipped at import', label);
            continue;
          }
          report.imported += 1;
          const impossible = unsatisfiable(document.original, operation);
          if (impossible) {
            count(
              report.ungeneratable,
              `the document admits no valid request: ${impossible.reason}`,
              `${label}: ${impossible.where}`,
            );
            continue;
          }
          const schema = (definition.body as { function: { parameters: Node } }).function.parameters;
          const generated = await generator.generate(schema, {
            seed: seed + j,
            alwaysFakeOptionals: true,
            maxItems: 3,
            // No maxLength: json-schema-faker cuts formatted strings to it (a date-time to "2008-01-07T0").
            minLength: 1,
            maxDepth: 4,
            useDefaultValue: true,
          });
          if ('failed' in generated) {
            count(report.ungeneratable, generated.failed, label);
            continue;
          }
          const input = generated.input;
          const before = upstream.received.length;
          const result = await api.post(`/v1/functions/${name}/execute`, {
            function_input: input,
            linked_account_owner_id: ownerId,
          });
          if (result.status !== 200) {
            // Patchbay refused the generated input: the generator made a value the definition does not accept.
            const text = JSON.stringify(result.body);
            const reason = /must match exactly one schema in oneOf/.test(text)
              ? 'generated input matches several oneOf branches'
              : /format/.test(text)
                ? 'generated input breaks a format'
                : /pattern/.test(text)
                  ? 'generated input breaks a pattern'
                  : `Patchbay answered ${result.status}`;
            count(report.ungeneratable, reason, `${label}: ${text.slice(0, 200)}`);
            continue;
          }
          report.inputs_generated += 1;
          const received = upstream.received[before];
          if (!received) {
            count(
              report.invalid_by_reason,
              `no request reached the upstream: ${JSON.stringify(result.body).slice(0, 100)}`,
              label,
            );
            report.executed += 1;
            report.requests_invalid += 1;
            continue;
          }
          report.executed += 1;
          oracle ??= DocumentOracle.start(document.original, document.k, document.operations);
          const problems = await validate(oracle, j, document.original, operation, received);
          if (process.env.FIDELITY_DUMP && problems.length > 0) {
            // Each rejected request in full, with the input it was made from, for triage.
            writeFileSync(
              join(process.env.FIDELITY_DUMP, `${name}.json`),
              JSON.stringify({ label, problems, input, ...received, body: received.body.toString('utf8') }, null, 1),
            );
          }
          if (problems.length === 0) {
            report.requests_valid += 1;
          } else {
            report.requests_invalid += 1;
            count(
              report.invalid_by_reason,
              problems[0].reason,
              `${label}: ${problems[0].detail} — ${received.method} ${received.url}${bodyNote(received)}`,
            );
          }
        }
      } finally {
        await oracle?.then(
          (judge) => judge.close(),
          () => undefined,
        );
      }
    }
  } finally {
    await generator.close();
  }
  report.valid_percent =
    report.executed === 0 ? 0 : Math.round((report.requests_valid / report.executed) * 10000) / 100;
  return report;
}

/**
 * Why no request can satisfy the operation as its document writes it, when a schema of its
 * parameters or body admits no value that the generator (which fills every optional property)
 * would make. Judged on the original document alone, before anything is executed:
 * - an `enum` none of whose values has the schema's `type` (an enum of arrays on an integer);
 * - a `oneOf` (without a discriminator) of open objects in which every branch's properties also
 *   satisfy another branch, so that every object built from one branch matches several;
 * - an `allOf` one of whose members' `additionalProperties` (false, or a schema of another type) refuses
 *   a required property that is declared beside it (Azure's `UserBase` allows only objects besides its
 *   own properties, and `UserCreateParameters` requires `accountEnabled`, a boolean);
 * - a required path parameter whose placeholder is only in the path's fragment (`/send/#env/{id}`): no
 *   part of a URL after `#` is sent.
 */
export function unsatisfiable(doc: Node, operation: SampledOperation): { reason: string; where: string } | undefined {
  const item = (doc.paths as Node)[operation.path] as Node;
  const op = item[operation.method] as Node;
  const roots: [string, unknown][] = [];
  const fragment = operation.path.includes('#') ? operation.path.slice(operation.path.indexOf('#')) : '';
  for (const list of [item.parameters, op.parameters]) {
    for (const entry of Array.isArray(list) ? list : []) {
      const parameter = resolve(doc, entry);
      if (isNode(parameter)) {
        roots.push([`${String(parameter.in)} ${String(parameter.name)}`, parameter.schema]);
        if (parameter.in === 'path' && fragment.includes(`{${String(parameter.name)}}`)) {
          return {
            reason: "a path parameter only in the path's fragment, which no request carries",
            where: `path ${String(parameter.name)}`,
          };
        }
      }
    }
  }
  const body = resolve(doc, op.requestBody);
  for (const [mediaType, media] of Object.entries(isNode(body) && isNode(body.content) ? body.content : {})) {
    roots.push([`body ${mediaType}`, isNode(media) ? media.schema : undefined]);
  }
  const seen = new Set<unknown>();
  const visit = (value: unknown, where: string): { reason: string; where: string } | undefined => {
    const schema = resolve(doc, value);
    if (!isNode(schema) || seen.has(schema)) {
      return undefined;
    }
    seen.add(schema);
    const types = typesOf(schema);
    if (Array.isArray(schema.enum) && schema.enum.length > 0 && types.length > 0) {
      if (!schema.enum.some((entry) => types.some((type) => hasType(entry, type)))) {
        return {
          reason: 'an enum none of whose values has the declared type',
          where: `${where}: ${JSON.stringify({ type: schema.type, enum: schema.enum }).slice(0, 120)}`,
        };
      }
    }
    const refused = allOfRefusesRequired(doc, schema);
    if (refused) {
      return {
        reason: "an allOf member's additionalProperties refuses a required property declared beside it",
        where: `${where}.${refused}`,
      };
    }
    if (overlappingOpenOneOf(doc, schema)) {
      return {
        reason: "a oneOf of open objects whose branches accept each other's properties (every value matches several)",
        where,
      };
    }
    const children: [unknown, string][] = [
      [schema.items, `${where}[]`],
      ...Object.entries(isNode(schema.properties) ? schema.properties : {}).map(([name, child]): [unknown, string] => [
        child,
        `${where}.${name}`,
      ]),
      ...(Array.isArray(schema.allOf) ? schema.allOf : []).map((child): [unknown, string] => [child, where]),
    ];
    for (const [child, at] of children) {
      const found = visit(child, at);
      if (found) {
        return found;
      }
    }
    return undefined;
  };
  for (const [where, schema] of roots) {
    const found = visit(schema, where);
    if (found) {
      return found;
    }
  }
  return undefined;
}

/**
 * The first required property of an `allOf` that one of its members refuses: the member's
 * `additionalProperties` is false, or a schema whose type the property's declared type cannot have.
 */
function allOfRefusesRequired(doc: Node, schema: Node): string | undefined {
  if (!Array.isArray(schema.allOf)) {
    return undefined;
  }
  const members = [schema, ...schema.allOf.map((member) => resolve(doc, member))].filter(isNode);
  const declared: Node = {};
  const required = new Set<string>();
  for (const member of members) {
    Object.assign(declared, isNode(member.properties) ? member.properties : {});
    for (const name of Array.isArray(member.required) ? member.required : []) {
      required.add(String(name));
    }
  }
  for (const member of members.slice(1)) {
    const extra = resolve(doc, member.additionalProperties);
    if (extra !== false && !(isNode(extra) && typeof extra.type === 'string')) {
      continue;
    }
    const own = isNode(member.properties) ? member.properties : {};
    for (const name of required) {
      if (name in own || isNode(member.patternProperties)) {
        continue;
      }
      if (extra === false) {
        return name;
      }
      const property = resolve(doc, declared[name]);
      const types = isNode(property) ? typesOf(property) : [];
      const allowed = extra.type;
      const compatible = types.some(
        (type) => type === allowed || (type === 'integer' && allowed === 'number') || type === 'null',
      );
      if (types.length > 0 && !compatible) {
        return name;
      }
    }
  }
  return undefined;
}

function typesOf(schema: Node): string[] {
  const declared: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  const types = declared.filter((type): type is string => typeof type === 'string');
  return schema.nullable === true ? [...types, 'null'] : types;
}

function hasType(value: unknown, type: unknown): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isNode(value);
    default:
      return true;
  }
}

/** A `oneOf` of open objects, without a discriminator, in which each branch's full object satisfies another branch. */
function overlappingOpenOneOf(doc: Node, schema: Node): boolean {
  if (!Array.isArray(schema.oneOf) || schema.oneOf.length < 2 || schema.discriminator !== undefined) {
    return false;
  }
  const branches = schema.oneOf.map((branch) => resolve(doc, branch));
  const objects = branches.filter(
    (branch): branch is Node =>
      isNode(branch) &&
      (branch.type === 'object' || isNode(branch.properties)) &&
      branch.additionalProperties !== false &&
      branch.allOf === undefined &&
      branch.oneOf === undefined &&
      branch.anyOf === undefined,
  );
  if (objects.length !== branches.length) {
    return false;
  }
  const properties = (branch: Node): Node => (isNode(branch.properties) ? branch.properties : {});
  const shared = properties(schema);
  const satisfies = (full: Node, other: Node): boolean => {
    const given = { ...shared, ...properties(full) };
    const required = Array.isArray(other.required) ? (other.required as unknown[]) : [];
    if (!required.every((name) => typeof name === 'string' && name in given)) {
      return false;
    }
    return Object.entries(properties(other)).every(([name, declared]) => {
      if (!(name in given)) {
        return true;
      }
      const mine = resolve(doc, given[name]);
      const theirs = resolve(doc, declared);
      const a = isNode(mine) ? typesOf(mine) : [];
      const b = isNode(theirs) ? typesOf(theirs) : [];
      return a.length === 0 || b.length === 0 || a.some((type) => b.includes(type));
    });
  };
  return objects.every((full, i) => objects.some((other, k) => k !== i && satisfies(full, other)));
}

/**
 * json-schema-faker on a worker thread, bounded in time and memory: with every optional property
 * filled, a wide definition nesting four levels deep (AWS Redshift's scheduled actions) makes
 * millions of values and ran the bench out of memory. A generation that takes over
 * GENERATION_SECONDS or GENERATION_MB ends its worker and is counted as not generated.
 */
class InputGenerator {
  private worker?: Worker;

  async generate(schema: Node, options: Node): Promise<{ input: unknown } | { failed: string }> {
    const worker = (this.worker ??= new Worker(GENERATOR_SOURCE, {
      eval: true,
      // Not the runner's flags (vitest's --require hooks do not load in a worker).
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: GENERATION_MB },
    }));
    return new Promise((settle) => {
      // Only this call's listeners are removed: the worker's own (which start its port) stay.
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const stop = (failed: string) => {
        done();
        this.worker = undefined;
        void worker.terminate();
        settle({ failed });
      };
      const onMessage = (answer: { input?: unknown; error?: string }) => {
        done();
        settle(
          answer.error === undefined ? { input: answer.input } : { failed: `the generator failed: ${answer.error}` },
        );
      };
      const onError = (error: Error) =>
        stop(
          /memory/i.test(error.message)
            ? `the generator needed over ${GENERATION_MB} MB (the definition nests too widely)`
            : `the generator failed: ${error.message.slice(0, 80)}`,
        );
      const timer = setTimeout(
        () => stop(`the generator did not finish within ${GENERATION_SECONDS} s (the definition nests too widely)`),
        GENERATION_SECONDS * 1000,
      );
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage({ schema, options });
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
  }
}

const GENERATION_SECONDS = 30;
const GENERATION_MB = 1024;

const GENERATOR_SOURCE = `
const { parentPort } = require('node:worker_threads');
const faker = import('json-schema-faker');
parentPort.on('message', async ({ schema, options }) => {
  try {
    const { generateSync } = await faker;
    parentPort.postMessage({ input: generateSync(schema, options) });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message).slice(0, 80) });
  }
});
`;

/** Why the received request does not satisfy the operation, as reason (for grouping) and detail. */
async function validate(
  oracle: Promise<DocumentOracle>,
  j: number,
  doc: Node,
  operation: SampledOperation,
  received: Recorded,
): Promise<{ reason: string; detail: string }[]> {
  const problems: { reason: string; detail: string }[] = [];
  const op = ((doc.paths as Node)[operation.path] as Node)[operation.method] as Node;
  const declared = resolve(doc, op.requestBody);
  const content = isNode(declared) && isNode(declared.content) ? declared.content : {};
  const contentType = String(received.headers['content-type'] ?? '');
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  // The harness's own checks, which the validator does not make.
  if (received.body.length === 0 && contentType) {
    problems.push({ reason: 'Content-Type without a body', detail: contentType });
  }
  const matches = (declaredType: string) => {
    const type = declaredType.split(';')[0].trim().toLowerCase();
    return (
      type === mediaType ||
      (type.includes('*') && new RegExp(`^${type.replace(/[.+]/g, '\\$&').replace(/\*/g, '[^/]*')}$`).test(mediaType))
    );
  };
  if (received.body.length > 0 && !Object.keys(content).some(matches)) {
    problems.push({ reason: 'body media type not declared by the operation', detail: contentType });
  }
  if (isNode(declared) && declared.required === true && received.body.length === 0) {
    problems.push({ reason: 'required body not sent', detail: '' });
  }
  try {
    for (const error of await (await oracle).judge(j, received)) {
      // Grouped by the part of the request and the rule broken; the parameter's name is in the example.
      const where = error.path.split('/')[1] || 'request';
      const rule = error.errorCode ?? error.message.replace(/'[^']*'|"[^"]*"/g, '…');
      problems.push({ reason: `${where}: ${rule}`.slice(0, 120), detail: `${error.path} ${error.message}` });
    }
  } catch (error) {
    problems.push({ reason: `validator error: ${(error as Error).message.slice(0, 80)}`, detail: '' });
  }
  return problems;
}

/** The body of a received request, as an example shows it: media type, size and its start. */
function bodyNote(received: Recorded): string {
  if (received.body.length === 0) {
    return '';
  }
  const start = received.body.subarray(0, 80).toString('utf8').replace(/\s+/g, ' ');
  return ` [${String(received.headers['content-type'] ?? 'no Content-Type')}, ${received.body.length} bytes: ${start}]`;
}
