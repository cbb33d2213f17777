import { expect } from 'vitest';
import { OpenApiImportService, type OpenApiImportReport } from '../../../src/catalog/openapi/openapi-import.service.js';
import { insertAccount, insertConfiguration } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import { Upstream } from './upstream.js';

/** A hand-made OpenAPI document imported against a local upstream, with a project able to run its functions. */
export interface ImportedDocument {
  app: TestApp;
  upstream: Upstream;
  /** The linked-account owner whose (no_auth) account runs the functions. */
  owner: string;
  report: OpenApiImportReport;
}

/** Imports `document` as `appName` with its server at the upstream's `serverPath`, configured for a new project. */
export async function importDocument(document: string, appName: string, serverPath: string): Promise<ImportedDocument> {
  const app = await TestApp.start();
  const upstream = await Upstream.start();
  const report = await app.app.get(OpenApiImportService).importSources([document], {
    secrets: {},
    server: `${upstream.url}${serverPath}`,
  });
  const projectId = (await app.ctx.newProject()).projectId;
  await insertConfiguration(app, projectId, appName, { security_scheme: 'no_auth' });
  const owner = (await insertAccount(app, projectId, appName, 'no_auth', {})).linked_account_owner_id;
  return { app, upstream, owner, report };
}

export async function closeImported(imported: ImportedDocument | undefined): Promise<void> {
  await imported?.upstream.close();
  await imported?.app.close();
}

/**
 * `execute` runs an operation of the imported app by its operationId; `sent` runs it and answers the one request
 * the upstream received (the run must succeed).
 */
export function operationCalls(imported: () => ImportedDocument, appName: string) {
  const execute = (operationId: string, input: unknown) =>
    imported().app.post(`/v1/functions/${appName}__${operationId.toUpperCase()}/execute`, {
      function_input: input,
      linked_account_owner_id: imported().owner,
    });
  const sent = async (operationId: string, input: unknown) => {
    const { upstream } = imported();
    const before = upstream.received.length;
    const result = await execute(operationId, input);
    expect(result.body).toMatchObject({ success: true });
    expect(upstream.received.length).toBe(before + 1);
    return upstream.last;
  };
  return { execute, sent };
}
