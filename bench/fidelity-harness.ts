/**
 * The proof of issue #28, shared by `npm run bench:fidelity` (a stratified sample of the APIs.guru
 * directory) and its test (a fixed sample of about 300 operations): operations are imported from
 * their documents, executed with generated inputs through POST /v1/functions/{name}/execute against
 * a local recording upstream, and every request the upstream received is validated against the
 * operation in its original document by an OpenAPI request validator Patchbay's code does not use
 * (express-openapi-validator, fidelity-oracle.ts).
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateSync } from 'json-schema-faker';

import { ExpressOracle } from './fidelity-oracle.js';
import { isNode, resolve, type SampledOperation } from './fidelity-sample.js';

type Node = Record<string, unknown>;

/** One request as the upstream received it. */
export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local HTTP server that answers 200 `{}` to everything and records what it received. */
export class RecordingUpstream {
  readonly received: Recorded[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<RecordingUpstream> {
    const server = createServer();
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
  onProgress?: (done: number, total: number) => void,
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
  for (const document of documents) {
    const app = `FIDELITY_${document.k}`;
    const configured = await api.post('/v1/app-configurations', { app_name: app, security_scheme: 'no_auth' });
    const linked =
      configured.status < 300
        ? await api.post('/v1/linked-accounts/no-auth', { app_name: app, linked_account_owner_id: ownerId })
        : configured;
    for (const [j, operation] of document.operations.entries()) {
      done += 1;
      onProgress?.(done, report.operations_sampled);
      for (const feature of operation.features) {
        report.features[feature] = (report.features[feature] ?? 0) + 1;
      }
      const label = `${operation.file} ${operation.method.toUpperCase()} ${operation.path}`;
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
      const schema = (definition.body as { function: { parameters: Node } }).function.parameters;
      let input: unknown;
      try {
        input = generateSync(schema, {
          seed: seed + j,
          alwaysFakeOptionals: true,
          maxItems: 3,
          // No maxLength: json-schema-faker cuts formatted strings to it (a date-time to "2008-01-07T0").
          minLength: 1,
          maxDepth: 4,
          useDefaultValue: true,
        });
      } catch (error) {
        count(report.ungeneratable, `the generator failed: ${(error as Error).message.slice(0, 80)}`, label);
        continue;
      }
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
      const oracle = await ExpressOracle.start(
        document.original,
        document.k,
        operation.path,
        operation.method,
        received.body.length > 0,
      );
      const problems = await validate(oracle, document.original, operation, received).finally(() => oracle.close());
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
  }
  report.valid_percent =
    report.executed === 0 ? 0 : Math.round((report.requests_valid / report.executed) * 10000) / 100;
  return report;
}

/** Why the received request does not satisfy the operation, as reason (for grouping) and detail. */
async function validate(
  oracle: ExpressOracle,
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
    for (const error of await oracle.judge(received)) {
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
