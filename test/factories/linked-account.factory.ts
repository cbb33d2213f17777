import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { LinkedAccountEntity } from '../../src/linked-accounts/linked-account.entity.js';

let sequence = 0;

/**
 * A valid linked-account row: enabled, api_key, owner `owner-N`. `credentials` must already be
 * sealed (the context helper seals them with the service's own SecretBox).
 */
export function buildLinkedAccount(
  projectId: string,
  appName: string,
  credentials: string,
  overrides: Partial<LinkedAccountEntity> = {},
): LinkedAccountEntity {
  return Object.assign(new LinkedAccountEntity(), {
    id: randomUUID(),
    project_id: projectId,
    app_name: appName,
    linked_account_owner_id: `owner-${++sequence}`,
    security_scheme: 'api_key',
    credentials,
    enabled: true,
    ...overrides,
  });
}

export async function insertLinkedAccount(
  dataSource: DataSource,
  projectId: string,
  appName: string,
  credentials: string,
  overrides: Partial<LinkedAccountEntity> = {},
): Promise<LinkedAccountEntity> {
  const row = buildLinkedAccount(projectId, appName, credentials, overrides);
  const repository = dataSource.getRepository(LinkedAccountEntity);
  await repository.insert({ ...row, app: undefined, project: undefined });
  return repository.findOneByOrFail({ id: row.id });
}
