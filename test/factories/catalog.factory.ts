import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AppEntity, type StoredSecuritySchemes } from '../../src/apps/app.entity.js';
import type { SecurityScheme } from '../../src/apps/security-scheme.js';
import { FunctionEntity } from '../../src/functions/function.entity.js';

let sequence = 0;
const next = () => ++sequence;

/**
 * What a test may give of an app row: a scheme with only the settings the test needs (`{}` for a scheme
 * a test only configures), where the catalogue import would insist on all of them.
 */
export type AppOverrides = Partial<Omit<AppEntity, 'security_schemes'>> & {
  security_schemes?: Partial<Record<SecurityScheme, object>>;
};

/** A valid app row; `overrides` win. Secrets are not sealed here: use the catalogue import for those. */
export function buildApp(overrides: AppOverrides = {}): AppEntity {
  const n = next();
  const { security_schemes, ...rest } = overrides;
  return Object.assign(new AppEntity(), {
    name: `TEST_APP_${n}`,
    display_name: `Test App ${n}`,
    provider: 'Test Provider',
    version: '1.0.0',
    description: `A test application number ${n}`,
    logo: 'https://example.com/logo.svg',
    categories: ['Testing'],
    visibility: 'public',
    active: true,
    security_schemes: (security_schemes ?? {
      api_key: { location: 'header', name: 'X-Test-Key' },
    }) as StoredSecuritySchemes,
    secrets: null,
    content_hash: createHash('sha256').update(String(n)).digest('hex'),
    ...rest,
  });
}

/** A valid REST function row of `appName`; `overrides` win. */
export function buildFunction(appName: string, overrides: Partial<FunctionEntity> = {}): FunctionEntity {
  const n = next();
  return Object.assign(new FunctionEntity(), {
    name: `${appName}__ACTION_${n}`,
    app_name: appName,
    description: `Performs test action ${n}`,
    tags: ['test'],
    visibility: 'public',
    active: true,
    protocol: 'rest',
    protocol_data: { method: 'GET', path: `/actions/${n}`, server_url: 'http://127.0.0.1:9' },
    parameters: {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          properties: { q: { type: 'string', description: 'Search text' } },
          required: [],
          visible: ['q'],
          additionalProperties: false,
        },
      },
      required: [],
      visible: ['query'],
      additionalProperties: false,
    },
    response: {},
    content_hash: createHash('sha256').update(`f${n}`).digest('hex'),
    ...overrides,
  });
}

export async function insertApp(dataSource: DataSource, overrides: AppOverrides = {}): Promise<AppEntity> {
  const app = buildApp(overrides);
  await dataSource.getRepository(AppEntity).save(app);
  return app;
}

export async function insertFunction(
  dataSource: DataSource,
  appName: string,
  overrides: Partial<FunctionEntity> = {},
): Promise<FunctionEntity> {
  const fn = buildFunction(appName, overrides);
  await dataSource.getRepository(FunctionEntity).save(fn);
  return fn;
}
