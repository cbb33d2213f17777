import { randomUUID } from 'node:crypto';
import type { DataSource, QueryDeepPartialEntity } from 'typeorm';
import { AppConfigurationEntity } from '../../src/app-configurations/app-configuration.entity.js';

/**
 * A valid configuration row of `appName` for `projectId`: enabled, api_key, every function enabled,
 * no overrides. `overrides` win; the configuration endpoints' rules are not applied here.
 */
export function buildAppConfiguration(
  projectId: string,
  appName: string,
  overrides: Partial<AppConfigurationEntity> = {},
): AppConfigurationEntity {
  return Object.assign(new AppConfigurationEntity(), {
    id: randomUUID(),
    project_id: projectId,
    app_name: appName,
    security_scheme: 'api_key',
    security_scheme_overrides: {},
    secrets: null,
    enabled: true,
    all_functions_enabled: true,
    enabled_functions: [],
    ...overrides,
  });
}

export async function insertAppConfiguration(
  dataSource: DataSource,
  projectId: string,
  appName: string,
  overrides: Partial<AppConfigurationEntity> = {},
): Promise<AppConfigurationEntity> {
  const row = buildAppConfiguration(projectId, appName, overrides);
  const repository = dataSource.getRepository(AppConfigurationEntity);
  await repository.insert(row as QueryDeepPartialEntity<AppConfigurationEntity>);
  return repository.findOneByOrFail({ id: row.id });
}
