import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import type { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import type { AppEntity } from '../apps/app.entity.js';
import { AppNotFoundError } from '../apps/apps.errors.js';
import type { AppsRepository } from '../apps/apps.repository.js';
import type { SecurityScheme } from '../apps/security-scheme.js';
import { apiKeyActor, SYSTEM_ACTOR } from '../audit/actor.js';
import { Recorded } from '../../test/helpers/recorders.js';
import type { LinkedAccountEntity } from './linked-account.entity.js';
import {
  LinkedAccountExistsError,
  LinkedAccountNotFoundError,
  SecuritySchemeMismatchError,
} from './linked-accounts.errors.js';
import type { LinkedAccountsRepository, NewLinkedAccount } from './linked-accounts.repository.js';
import { LinkedAccountsService } from './linked-accounts.service.js';

/**
 * The linking rules in isolation: the service over accounts kept in memory behind the repository methods it
 * calls, so that what it decides to write can be read. The same rules through HTTP and a real database:
 * test/e2e/linked-accounts and test/e2e/connect-links; the repository's own queries: test/medium.
 */
class Accounts extends Recorded {
  readonly rows = new Map<string, LinkedAccountEntity>();
  /** What the service asked to write, by method. */
  readonly writes: string[] = [];
  /** Set to make the next insert lose a race with a concurrent link of the same owner. */
  loseNextInsert = false;

  private find(projectId: string, predicate: (row: LinkedAccountEntity) => boolean): LinkedAccountEntity | null {
    return [...this.rows.values()].find((row) => row.project_id === projectId && predicate(row)) ?? null;
  }

  readonly repository = {
    findForProject: (projectId: string, id: string) => Promise.resolve(this.find(projectId, (row) => row.id === id)),
    findByOwner: (projectId: string, appName: string, ownerId: string) =>
      Promise.resolve(
        this.find(projectId, (row) => row.app_name === appName && row.linked_account_owner_id === ownerId),
      ),
    insert: (row: NewLinkedAccount) => {
      this.writes.push('insert');
      if (this.loseNextInsert) {
        this.loseNextInsert = false;
        return Promise.resolve(false);
      }
      const now = new Date();
      this.rows.set(row.id, { ...row, created_at: now, updated_at: now });
      return Promise.resolve(true);
    },
    upsertAccount: (row: Omit<NewLinkedAccount, 'enabled' | 'needs_relink'>) => {
      this.writes.push('upsertAccount');
      const existing = this.find(
        row.project_id,
        (stored) => stored.app_name === row.app_name && stored.linked_account_owner_id === row.linked_account_owner_id,
      );
      if (existing) {
        Object.assign(existing, { security_scheme: row.security_scheme, credentials: row.credentials });
        return Promise.resolve(existing.id);
      }
      const now = new Date();
      this.rows.set(row.id, {
        ...row,
        enabled: true,
        needs_relink: false,
        created_at: now,
        updated_at: now,
      });
      return Promise.resolve(row.id);
    },
    setEnabled: (projectId: string, id: string, enabled: boolean) => {
      this.writes.push(`setEnabled(${enabled})`);
      const row = this.find(projectId, (stored) => stored.id === id);
      if (row) {
        row.enabled = enabled;
      }
      return Promise.resolve(row && { ...row });
    },
  };
}

const ACTOR = apiKeyActor('00000000-0000-4000-8000-000000000001');

describe('LinkedAccountsService', () => {
  const box = new SecretBox(randomBytes(32));
  let accounts: Accounts;
  let configured: Record<string, SecurityScheme>;
  let service: LinkedAccountsService;

  beforeEach(() => {
    accounts = new Accounts();
    configured = { 'p1/MAIL': 'api_key', 'p1/FILES': 'http_basic', 'p1/NOTES': 'no_auth' };
    const visible = new Set(['MAIL', 'FILES', 'NOTES', 'UNCONFIGURED']);
    const apps = {
      findVisibleByName: (name: string) => Promise.resolve(visible.has(name) ? ({ name } as AppEntity) : null),
    };
    const configurations = {
      findForProject: (projectId: string, appName: string) => {
        const scheme = configured[`${projectId}/${appName}`];
        return Promise.resolve(
          scheme ? ({ app_name: appName, security_scheme: scheme } as AppConfigurationEntity) : null,
        );
      },
    };
    service = new LinkedAccountsService(
      accounts.repository as unknown as LinkedAccountsRepository,
      configurations as unknown as AppConfigurationsRepository,
      apps as unknown as AppsRepository,
      box,
      accounts.changes,
      accounts.audit,
    );
  });

  const linkApiKey = (ownerId = 'u1', appName = 'MAIL') =>
    service.linkApiKeyAccount('p1', ACTOR, {
      app_name: appName,
      linked_account_owner_id: ownerId,
      api_key: 'k-secret',
    });

  describe('linking with credentials', () => {
    it("seals the credentials in the scheme's shape and answers without them", async () => {
      const linked = await linkApiKey();
      const basic = await service.linkHttpBasicAccount('p1', ACTOR, {
        app_name: 'FILES',
        linked_account_owner_id: 'u1',
        username: 'ann',
        password: 'pw-secret',
      });
      const none = await service.linkNoAuthAccount('p1', ACTOR, { app_name: 'NOTES', linked_account_owner_id: 'u1' });
      const opened = (id: string) => box.openJson(accounts.rows.get(id)?.credentials as string);
      expect(opened(linked.id)).toEqual({ api_key: 'k-secret' });
      expect(opened(basic.id)).toEqual({ username: 'ann', password: 'pw-secret' });
      expect(opened(none.id)).toEqual({});
      expect(JSON.stringify([linked, basic])).not.toMatch(/secret/);
      expect(linked).toMatchObject({ app_name: 'MAIL', security_scheme: 'api_key', enabled: true });
    });

    it('links only through the scheme the project configured for the app', async () => {
      await expect(
        service.linkHttpBearerAccount('p1', ACTOR, { app_name: 'MAIL', linked_account_owner_id: 'u1', token: 't' }),
      ).rejects.toThrow(new SecuritySchemeMismatchError('MAIL', 'api_key', 'http_bearer'));
      await expect(linkApiKey('u1', 'UNCONFIGURED')).rejects.toBeInstanceOf(AppConfigurationNotFoundError);
      await expect(linkApiKey('u1', 'GONE')).rejects.toBeInstanceOf(AppNotFoundError);
      expect(accounts.writes).toEqual([]);
    });

    it('refuses a second account of one owner, also when a concurrent link wins the insert', async () => {
      await linkApiKey('u1');
      await expect(linkApiKey('u1')).rejects.toBeInstanceOf(LinkedAccountExistsError);
      accounts.loseNextInsert = true;
      await expect(linkApiKey('u2')).rejects.toBeInstanceOf(LinkedAccountExistsError);
      expect(accounts.rows.size).toBe(1);
    });
  });

  describe('re-linking (connect links, OAuth 2.0)', () => {
    it('keeps the account and its id, replaces the credentials, and tells the execution caches', async () => {
      const first = await service.linkOrRelinkAccount('p1', SYSTEM_ACTOR, 'MAIL', 'u1', 'api_key', { api_key: 'old' });
      const again = await service.linkOrRelinkAccount('p1', SYSTEM_ACTOR, 'MAIL', 'u1', 'api_key', { api_key: 'new' });
      expect(again.id).toBe(first.id);
      expect(box.openJson(accounts.rows.get(first.id)?.credentials as string)).toEqual({ api_key: 'new' });
      expect(accounts.published).toEqual(['linked_accounts', 'linked_accounts']);
      expect(accounts.audited.map((change) => [change.action, change.resourceId, change.actor])).toEqual([
        ['linked_account.created', first.id, SYSTEM_ACTOR],
        ['linked_account.relinked', first.id, SYSTEM_ACTOR],
      ]);
    });

    it('applies the same configuration checks as the link endpoints', async () => {
      await expect(
        service.linkOrRelinkAccount('p1', SYSTEM_ACTOR, 'MAIL', 'u1', 'http_basic', {}),
      ).rejects.toBeInstanceOf(SecuritySchemeMismatchError);
      expect(accounts.writes).toEqual([]);
    });
  });

  describe('update', () => {
    it('writes `enabled` alone and publishes; absent or null enabled writes and publishes nothing', async () => {
      const linked = await linkApiKey();
      expect(await service.updateLinkedAccount('p1', ACTOR, linked.id, {})).toEqual(linked);
      expect(await service.updateLinkedAccount('p1', ACTOR, linked.id, { enabled: null })).toEqual(linked);
      expect(accounts.published).toEqual([]);
      expect((await service.updateLinkedAccount('p1', ACTOR, linked.id, { enabled: false })).enabled).toBe(false);
      expect(accounts.writes).toEqual(['insert', 'setEnabled(false)']);
      expect(accounts.published).toEqual(['linked_accounts']);
      expect(accounts.audited.map((change) => change.action)).toEqual([
        'linked_account.created',
        'linked_account.updated',
      ]);
    });

    it("404 for another project's account", async () => {
      const linked = await linkApiKey();
      await expect(service.updateLinkedAccount('p2', ACTOR, linked.id, { enabled: false })).rejects.toBeInstanceOf(
        LinkedAccountNotFoundError,
      );
      expect(accounts.rows.get(linked.id)?.enabled).toBe(true);
    });
  });
});
