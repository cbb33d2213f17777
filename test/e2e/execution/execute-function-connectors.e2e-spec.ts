import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { starterCatalogPath } from '../../../src/catalog/starter-catalog.js';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { insertAccount, insertConfiguration } from '../../factories/execution.factory.js';
import { TestApp } from '../../helpers/test-app.js';

/** The starter catalogue's own definition, so that the test follows it when it changes. */
const starter = (
  JSON.parse(
    readFileSync(join(starterCatalogPath(), 'patchbay_utils', 'functions.json'), 'utf8'),
  ) as Partial<FunctionEntity>[]
).find((fn) => fn.name === 'PATCHBAY_UTILS__FORMAT_DATETIME') as Partial<FunctionEntity>;

describe('POST /v1/functions/{function_name}/execute for connector functions', () => {
  let app: TestApp;
  let owner: string;

  const execute = (name: string, functionInput: unknown) =>
    app.post(`/v1/functions/${name}/execute`, { function_input: functionInput, linked_account_owner_id: owner });

  beforeAll(async () => {
    app = await TestApp.start();
    const { projectId } = await app.ctx.newProject();
    await app.ctx.newApp({ name: 'PATCHBAY_UTILS', security_schemes: { no_auth: {} } });
    await app.ctx.newFunction('PATCHBAY_UTILS', {
      ...starter,
      name: 'PATCHBAY_UTILS__FORMAT_DATETIME',
      protocol_data: {},
    });
    await app.ctx.newFunction('PATCHBAY_UTILS', {
      name: 'PATCHBAY_UTILS__SEND_EMAIL',
      protocol: 'connector',
      protocol_data: {},
      parameters: { type: 'object', properties: {}, required: [], visible: [], additionalProperties: false },
    });
    await insertConfiguration(app, projectId, 'PATCHBAY_UTILS', { security_scheme: 'no_auth' });
    owner = (await insertAccount(app, projectId, 'PATCHBAY_UTILS', 'no_auth', {})).linked_account_owner_id;
  });

  afterAll(() => app.close());

  it('PATCHBAY_UTILS__FORMAT_DATETIME converts an instant to a time zone and formats it', async () => {
    const res = await execute('PATCHBAY_UTILS__FORMAT_DATETIME', {
      timestamp: '2025-06-03T14:30:00Z',
      time_zone: 'Europe/Paris',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        formatted: expect.stringMatching(/^Tuesday, June 3, 2025 at 4:30:00\sPM GMT\+2$/),
        time_zone: 'Europe/Paris',
        iso: '2025-06-03T16:30:00+02:00',
        utc_offset: '+02:00',
      },
      error: null,
    });
  });

  it('formats for the given locale, reads offsets and fractions, and handles half-hour zones', async () => {
    const res = await execute('PATCHBAY_UTILS__FORMAT_DATETIME', {
      timestamp: '2025-01-15T09:05:07.250-05:00',
      time_zone: 'Asia/Kolkata',
      locale: 'fr-FR',
    });
    expect(res.body.success).toBe(true);
    expect(res.body.data.iso).toBe('2025-01-15T19:35:07.250+05:30');
    expect(res.body.data.utc_offset).toBe('+05:30');
    expect(res.body.data.formatted).toMatch(/^mercredi 15 janvier 2025/);
  });

  it('reads a time without an offset as UTC', async () => {
    const res = await execute('PATCHBAY_UTILS__FORMAT_DATETIME', {
      timestamp: '2025-12-24T23:00:00',
      time_zone: 'UTC',
    });
    expect(res.body.data).toMatchObject({ iso: '2025-12-24T23:00:00+00:00', time_zone: 'UTC', utc_offset: '+00:00' });
  });

  it('answers success:false for an unknown time zone, a bad locale or a timestamp that is not ISO 8601', async () => {
    const zone = await execute('PATCHBAY_UTILS__FORMAT_DATETIME', {
      timestamp: '2025-06-03T14:30:00Z',
      time_zone: 'Mars/Olympus',
    });
    expect(zone.body).toEqual({
      success: false,
      data: null,
      error:
        'Connector PATCHBAY_UTILS__FORMAT_DATETIME failed: Unknown time zone "Mars/Olympus": use an IANA name such as Europe/Paris',
    });
    const locale = await execute('PATCHBAY_UTILS__FORMAT_DATETIME', {
      timestamp: '2025-06-03T14:30:00Z',
      time_zone: 'UTC',
      locale: 'not a locale!',
    });
    expect(locale.body.error).toBe(
      'Connector PATCHBAY_UTILS__FORMAT_DATETIME failed: Unknown locale "not a locale!": use a BCP 47 tag such as en-US',
    );
    const timestamp = await execute('PATCHBAY_UTILS__FORMAT_DATETIME', { timestamp: 'next tuesday', time_zone: 'UTC' });
    expect(timestamp.body.error).toBe(
      'Connector PATCHBAY_UTILS__FORMAT_DATETIME failed: timestamp "next tuesday" is not an ISO 8601 date/time such as 2025-06-03T14:30:00Z',
    );
  });

  it('validates connector input against the visible schema like any function (400)', async () => {
    const res = await execute('PATCHBAY_UTILS__FORMAT_DATETIME', { timestamp: 1717425000 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(
      'Invalid function_input for PATCHBAY_UTILS__FORMAT_DATETIME: function_input.time_zone: is required; ' +
        'function_input.timestamp: must be string',
    );
  });

  it('answers success:false, not a crash, for a connector function no connector implements', async () => {
    const res = await execute('PATCHBAY_UTILS__SEND_EMAIL', {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: false,
      data: null,
      error:
        'PATCHBAY_UTILS__SEND_EMAIL is a connector function, but this Patchbay service has no connector registered for it',
    });
  });
});
