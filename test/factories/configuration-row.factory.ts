import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { AppConfigurationEntity } from '../../src/app-configurations/app-configuration.entity.js';

export type ConfigurationRowOverrides = Partial<
  Pick<AppConfigurationEntity, 'security_scheme' | 'enabled' | 'all_functions_enabled' | 'enabled_functions'>
>;

/**
 * Writes an app configuration row straight into the table, for tests of the catalogue endpoints that
 * only read configurations (`configured_only`); the configuration endpoints' own rules are not applied.
 * Default: enabled, every function enabled.
 */
export async function insertConfigurationRow(
  dataSource: DataSource,
  projectId: string,
  appName: string,
  overrides: ConfigurationRowOverrides = {},
): Promise<void> {
  const row = {
    security_scheme: 'api_key' as const,
    enabled: true,
    all_functions_enabled: true,
    enabled_functions: [] as string[],
    ...overrides,
  };
  await dataSource.query(
    `INSERT INTO app_configurations
       (id, project_id, app_name, security_scheme, security_scheme_overrides, secrets, enabled,
        all_functions_enabled, enabled_functions)
     VALUES ($1, $2, $3, $4, '{}'::jsonb, NULL, $5, $6, $7)`,
    [
      randomUUID(),
      projectId,
      appName,
      row.security_scheme,
      row.enabled,
      row.all_functions_enabled,
      row.enabled_functions,
    ],
  );
}
