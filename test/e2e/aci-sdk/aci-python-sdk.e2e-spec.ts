import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../../libs/common/src/index.js';
import { json, Upstream } from '../execution/upstream.js';
import { TestApp } from '../../helpers/test-app.js';

/**
 * The official ACI Python SDK (../shared/vendor/aci-python-sdk), unchanged, driven by pytest
 * (test/sdk/aci_python) against this service on the database under test, with a local upstream.
 * Each pytest test is one test here, so the results count with the rest.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const SDK = resolve(ROOT, '../shared/vendor/aci-python-sdk');
const PYTHON = join(ROOT, '.venv-aci-sdk/bin/python');
const TESTS = 'test/sdk/aci_python';

interface PytestResult {
  nodeid: string;
  when: string;
  outcome: 'passed' | 'failed' | 'skipped';
  longrepr: string | null;
}

function collect(): string[] {
  if (!existsSync(SDK)) {
    return [];
  }
  // The virtual environment is made once (by .ci/run, or here on first use).
  execFileSync('bash', [join(ROOT, 'scripts/setup-aci-python-sdk.sh')], { cwd: ROOT, stdio: 'inherit' });
  const out = execFileSync(PYTHON, ['-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider', TESTS], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return out.split('\n').filter((line) => line.startsWith(`${TESTS}/`));
}

const ids = collect();

const SKIPPED = '(skipped: ../shared/vendor/aci-python-sdk is not beside this checkout)';
const TITLE = 'the official ACI Python SDK against Patchbay';
// Without the SDK, one skipped test states why, so the report shows the tier rather than "0 test".
const cases = ids.length > 0 ? ids : [`the SDK's pytest suite ${SKIPPED}`];

describe.skipIf(ids.length === 0)(TITLE, () => {
  let app: TestApp;
  let upstream: Upstream;
  let work: string;
  const results = new Map<string, PytestResult[]>();

  beforeAll(async () => {
    app = await TestApp.start({ OAUTH2_REDIRECT_ALLOWED_ORIGINS: 'https://platform.aci.dev' });
    upstream = await Upstream.start();
    // The upstream answers with what it received, so the SDK tests can assert the exact request.
    upstream.respond((request, response) =>
      json(response, 200, {
        method: request.method,
        path: request.path,
        query: Object.fromEntries(request.query),
        headers: request.headers,
        json: request.body ? JSON.parse(request.body) : null,
      }),
    );
    const fixtures = await createFixtures(app, upstream.url);
    work = mkdtempSync(join(tmpdir(), 'patchbay-aci-sdk-'));
    const fixturesFile = join(work, 'fixtures.json');
    const resultsFile = join(work, 'results.json');
    writeFileSync(fixturesFile, JSON.stringify(fixtures));
    const output = await run(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-rN', TESTS], {
      PATCHBAY_SDK_FIXTURES: fixturesFile,
      PATCHBAY_SDK_RESULTS: resultsFile,
    });
    if (!existsSync(resultsFile)) {
      throw new Error(`pytest wrote no results:\n${output}`);
    }
    for (const result of JSON.parse(readFileSync(resultsFile, 'utf8')) as PytestResult[]) {
      results.set(result.nodeid, [...(results.get(result.nodeid) ?? []), result]);
    }
  }, 300_000);

  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    if (work) {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it.each(cases)('%s', (id) => {
    const reports = results.get(id);
    expect(reports, `pytest reported nothing for ${id}`).toBeDefined();
    const failed = reports?.find((report) => report.outcome !== 'passed');
    expect(failed?.outcome, failed?.longrepr ?? '').toBeUndefined();
  });
});

/** The catalogue rows the SDK tests use, in a category of their own, and the two projects' keys. */
async function createFixtures(app: TestApp, upstreamUrl: string) {
  const tag = randomBytes(4).toString('hex').toUpperCase();
  const category = `sdk-${tag.toLowerCase()}`;
  const project = await app.ctx.newProject('sdk project');
  const other = await app.ctx.newProject('other sdk project');
  const apiApp = await app.ctx.newApp({
    name: `SDK_INVENTORY_${tag}`,
    display_name: 'Inventory',
    description: 'Store and fetch inventory items',
    categories: [category],
    security_schemes: { api_key: { location: 'header', name: 'X-Echo-Key', prefix: 'Token' } },
  });
  const getItem = await app.ctx.newFunction(apiApp.name, {
    name: `${apiApp.name}__GET_ITEM`,
    description: 'Fetch one inventory item by its id',
    protocol_data: { method: 'GET', path: '/items/{item_id}', server_url: upstreamUrl },
    parameters: {
      type: 'object',
      properties: {
        path: {
          type: 'object',
          properties: { item_id: { type: 'string', description: 'Item id' } },
          required: ['item_id'],
          visible: ['item_id'],
          additionalProperties: false,
        },
        query: {
          type: 'object',
          properties: { q: { type: 'string', description: 'Free text' } },
          required: [],
          visible: ['q'],
          additionalProperties: false,
        },
        header: {
          type: 'object',
          properties: { Accept: { type: 'string', default: 'application/json' } },
          required: ['Accept'],
          visible: [],
          additionalProperties: false,
        },
      },
      required: ['path', 'header'],
      visible: ['path', 'query'],
      additionalProperties: false,
    },
  });
  const createItem = await app.ctx.newFunction(apiApp.name, {
    name: `${apiApp.name}__CREATE_ITEM`,
    description: 'Create a new inventory item',
    protocol_data: { method: 'POST', path: '/items', server_url: upstreamUrl },
    parameters: {
      type: 'object',
      properties: {
        body: {
          type: 'object',
          properties: { title: { type: 'string' }, source: { type: 'string', default: 'sdk' } },
          required: ['title', 'source'],
          visible: ['title'],
          additionalProperties: false,
        },
      },
      required: ['body'],
      visible: ['body'],
      additionalProperties: false,
    },
  });
  const noauthApp = await app.ctx.newApp({
    name: `SDK_CLOCK_${tag}`,
    description: 'Tells the time of day',
    categories: [category],
    security_schemes: { no_auth: {} },
  });
  await app.ctx.newFunction(noauthApp.name, {
    name: `${noauthApp.name}__NOW`,
    description: 'The current time',
    protocol_data: { method: 'GET', path: '/now', server_url: upstreamUrl },
  });
  const oauthClientSecret = `sdk-client-secret-${tag}`;
  const oauthClientId = `sdk-client-id-${tag}`;
  const oauthAuthorizeUrl = 'https://auth.example.com/oauth/authorize';
  const oauthApp = await app.ctx.newApp({
    name: `SDK_MAIL_${tag}`,
    description: 'Reads the mailbox',
    categories: [category],
    security_schemes: {
      oauth2: {
        location: 'header',
        name: 'Authorization',
        prefix: 'Bearer',
        client_id: oauthClientId,
        scope: 'mail.read',
        authorize_url: oauthAuthorizeUrl,
        access_token_url: 'https://auth.example.com/oauth/token',
        refresh_token_url: 'https://auth.example.com/oauth/token',
      },
    },
    secrets: app.app.get(SecretBox).sealJson({ oauth2_client_secret: oauthClientSecret }),
  });
  await app.ctx.newFunction(oauthApp.name, { name: `${oauthApp.name}__LIST_MAIL`, description: 'List mail' });
  const scratchApp = await app.ctx.newApp({
    name: `SDK_SCRATCH_${tag}`,
    description: 'An app configured and removed by the tests',
    categories: [category],
    security_schemes: { no_auth: {} },
  });
  const unconfigured = await app.ctx.newApp({
    name: `SDK_WAREHOUSE_${tag}`,
    description: 'Create and list warehouse items',
    categories: [category],
  });
  const unconfiguredFunction = await app.ctx.newFunction(unconfigured.name, {
    name: `${unconfigured.name}__CREATE_ITEM`,
    description: 'Create a new warehouse item',
  });
  return {
    url: app.url,
    api_key: project.apiKey,
    other_api_key: other.apiKey,
    category,
    category_apps: [apiApp.name, noauthApp.name, oauthApp.name, scratchApp.name, unconfigured.name],
    api_app: apiApp.name,
    get_item: getItem.name,
    get_item_description: getItem.description,
    create_item: createItem.name,
    noauth_app: noauthApp.name,
    oauth_app: oauthApp.name,
    oauth_client_id: oauthClientId,
    oauth_client_secret: oauthClientSecret,
    oauth_authorize_url: oauthAuthorizeUrl,
    scratch_app: scratchApp.name,
    unconfigured_function: unconfiguredFunction.name,
    upstream_key: `upstream-key-${tag}`,
  };
}

/** Runs a command to its end; resolves with its output whatever its exit code (the results file decides). */
function run(command: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolvePromise(output));
  });
}
