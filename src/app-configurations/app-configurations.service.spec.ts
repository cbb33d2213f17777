import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppEntity } from '../apps/app.entity.js';
import { AppNotFoundError } from '../apps/apps.errors.js';
import type { AppsRepository } from '../apps/apps.repository.js';
import { apiKeyActor } from '../audit/actor.js';
import { Recorded } from '../../test/helpers/recorders.js';
import type { FunctionsRepository } from '../functions/functions.repository.js';
import type { AppConfigurationEntity } from './app-configuration.entity.js';
import type { AppConfigurationCreate } from './app-configurations.dto.js';
import {
  AppConfigurationExistsError,
  AppConfigurationNotFoundError,
  SecuritySchemeNotSupportedError,
  UnknownEnabledFunctionsError,
} from './app-configurations.errors.js';
import type {
  AppConfigurationsRepository,
  ConfigurationChanges,
  NewAppConfiguration,
} from './app-configurations.repository.js';
import { AppConfigurationsService } from './app-configurations.service.js';

/**
 * The configuration rules in isolation: the service with rows kept in memory behind the repositories'
 * methods it calls, so that each rule is seen on its own and what the service asks the repository to write
 * can be read. The same rules through HTTP and a real database: test/e2e/app-configurations.
 */
class Rows extends Recorded {
  readonly configurations = new Map<string, AppConfigurationEntity>();
  /** Every update the service asked for, with the columns it named. */
  readonly updates: ConfigurationChanges[] = [];

  readonly repository = {
    findForProject: (projectId: string, appName: string) =>
      Promise.resolve(this.configurations.get(`${projectId}/${appName}`) ?? null),
    insert: (row: NewAppConfiguration) => {
      const key = `${row.project_id}/${row.app_name}`;
      if (this.configurations.has(key)) {
        return Promise.resolve(false);
      }
      const now = new Date();
      this.configurations.set(key, { ...row, created_at: now, updated_at: now });
      return Promise.resolve(true);
    },
    update: (projectId: string, appName: string, changes: ConfigurationChanges) => {
      this.updates.push(changes);
      const row = this.configurations.get(`${projectId}/${appName}`);
      if (!row) {
        return Promise.resolve(null);
      }
      Object.assign(row, changes, { updated_at: new Date() });
      return Promise.resolve({ ...row });
    },
  };

  readonly apps: Record<string, Partial<AppEntity>> = {
    MAIL: { name: 'MAIL', security_schemes: { oauth2: {}, api_key: {} } as AppEntity['security_schemes'] },
  };
  readonly functions: Record<string, string[]> = { MAIL: ['MAIL__SEND', 'MAIL__LIST'] };
}

const ACTOR = apiKeyActor('00000000-0000-4000-8000-000000000001');

describe('AppConfigurationsService', () => {
  const box = new SecretBox(randomBytes(32));
  let rows: Rows;
  let service: AppConfigurationsService;

  beforeEach(() => {
    rows = new Rows();
    const apps = {
      findVisibleByName: (name: string) => Promise.resolve((rows.apps[name] as AppEntity | undefined) ?? null),
    };
    const functions = {
      visibleNamesOfApp: (name: string) => Promise.resolve(rows.functions[name] ?? []),
      extraCredentialSchemesOfApp: () => Promise.resolve(['AppId']),
    };
    service = new AppConfigurationsService(
      rows.repository as unknown as AppConfigurationsRepository,
      apps as unknown as AppsRepository,
      functions as unknown as FunctionsRepository,
      box,
      rows.changes,
      rows.audit,
    );
  });

  const create = (input: Partial<AppConfigurationCreate> = {}) =>
    service.createAppConfiguration('p1', ACTOR, { app_name: 'MAIL', security_scheme: 'oauth2', ...input });

  describe('create', () => {
    it('refuses a scheme the app does not offer, naming the ones it does in the contract order', async () => {
      await expect(create({ security_scheme: 'http_basic' })).rejects.toThrow(
        new SecuritySchemeNotSupportedError('MAIL', 'http_basic', ['api_key', 'oauth2']),
      );
      expect(rows.configurations.size).toBe(0);
    });

    it('refuses an app that is not visible, and a second configuration of one app', async () => {
      await expect(create({ app_name: 'HIDDEN' })).rejects.toBeInstanceOf(AppNotFoundError);
      await create();
      await expect(create()).rejects.toBeInstanceOf(AppConfigurationExistsError);
    });

    it('with all functions enabled stores no list; otherwise exactly the listed functions, once each', async () => {
      expect((await create({ enabled_functions: ['MAIL__SEND'] })).enabled_functions).toEqual([]);
      const listed = await service.createAppConfiguration('p2', ACTOR, {
        app_name: 'MAIL',
        security_scheme: 'api_key',
        all_functions_enabled: false,
        enabled_functions: ['MAIL__SEND', 'MAIL__SEND'],
      });
      expect(listed).toMatchObject({ all_functions_enabled: false, enabled_functions: ['MAIL__SEND'] });
    });

    it('refuses a list naming functions the app does not have, naming them', async () => {
      await expect(
        create({ all_functions_enabled: false, enabled_functions: ['MAIL__SEND', 'MAIL__DROP', 'OTHER__X'] }),
      ).rejects.toThrow(new UnknownEnabledFunctionsError('MAIL', ['MAIL__DROP', 'OTHER__X']));
    });

    it('seals the OAuth 2.0 client secret apart from the plain overrides, masks it in the answer, and publishes', async () => {
      const created = await create({
        security_scheme_overrides: { oauth2: { client_id: 'id-1', client_secret: 'very-secret' } },
      });
      const stored = rows.configurations.get('p1/MAIL') as AppConfigurationEntity;
      expect(stored.security_scheme_overrides).toEqual({ oauth2: { client_id: 'id-1' } });
      expect(JSON.stringify(stored.security_scheme_overrides)).not.toContain('very-secret');
      expect(box.openJson(stored.secrets as string)).toEqual({ oauth2_client_secret: 'very-secret' });
      expect(JSON.stringify(created)).not.toContain('very-secret');
      expect(created.security_scheme_overrides.oauth2?.client_id).toBe('id-1');
      expect(rows.published).toEqual(['app_configurations']);
    });
  });

  describe('update', () => {
    beforeEach(async () => {
      await create({ all_functions_enabled: false, enabled_functions: ['MAIL__SEND'] });
      rows.published.length = 0;
      rows.audited.length = 0;
    });

    it('the client secret and the extra credentials share one sealed value: changing one keeps the other', async () => {
      const update = (input: object) => service.updateAppConfiguration('p1', ACTOR, 'MAIL', input);
      const opened = () =>
        box.openJson((rows.configurations.get('p1/MAIL') as AppConfigurationEntity).secrets as string);
      await update({ security_scheme_overrides: { oauth2: { client_id: 'id-1', client_secret: 'client-secret' } } });
      const withExtras = await update({ extra_credentials: { AppId: 'app-id-1' } });
      expect(withExtras.extra_credentials).toEqual({ AppId: '****' });
      expect(opened()).toEqual({ oauth2_client_secret: 'client-secret', extra_credentials: { AppId: 'app-id-1' } });
      await update({ security_scheme_overrides: { oauth2: { client_id: 'id-2', client_secret: 'new-secret' } } });
      expect(opened()).toEqual({ oauth2_client_secret: 'new-secret', extra_credentials: { AppId: 'app-id-1' } });
      expect((await update({ extra_credentials: {} })).extra_credentials).toEqual({});
      expect(opened()).toEqual({ oauth2_client_secret: 'new-secret' });
      await update({ security_scheme_overrides: {} });
      expect((rows.configurations.get('p1/MAIL') as AppConfigurationEntity).secrets).toBeNull();
    });

    it('asks the repository to write only the columns the input changes', async () => {
      await service.updateAppConfiguration('p1', ACTOR, 'MAIL', { enabled: false });
      await service.updateAppConfiguration('p1', ACTOR, 'MAIL', { security_scheme: 'api_key' });
      expect(rows.updates).toEqual([{ enabled: false }, { security_scheme: 'api_key' }]);
      expect(rows.published).toEqual(['app_configurations', 'app_configurations']);
      expect(rows.audited.map((change) => [change.action, change.actor])).toEqual([
        ['app_configuration.updated', ACTOR],
        ['app_configuration.updated', ACTOR],
      ]);
    });

    it('writes and publishes nothing when nothing changes (absent and null fields keep their value)', async () => {
      const before = await service.getAppConfiguration('p1', 'MAIL');
      expect(
        await service.updateAppConfiguration('p1', ACTOR, 'MAIL', { enabled: null, security_scheme: null }),
      ).toEqual(before);
      expect(rows.updates).toEqual([]);
      expect(rows.published).toEqual([]);
      expect(rows.audited).toEqual([]);
    });

    it('turning "all functions" on clears the list; turning it off without a list keeps the stored one unwritten', async () => {
      await service.updateAppConfiguration('p1', ACTOR, 'MAIL', { all_functions_enabled: true });
      const off = await service.updateAppConfiguration('p1', ACTOR, 'MAIL', { all_functions_enabled: false });
      expect(rows.updates).toEqual([
        { all_functions_enabled: true, enabled_functions: [] },
        { all_functions_enabled: false },
      ]);
      expect(off).toMatchObject({ all_functions_enabled: false, enabled_functions: [] });
    });

    it('checks a new list against the catalogue, and a new scheme against the app', async () => {
      await expect(
        service.updateAppConfiguration('p1', ACTOR, 'MAIL', { enabled_functions: ['MAIL__DROP'] }),
      ).rejects.toThrow(UnknownEnabledFunctionsError);
      await expect(service.updateAppConfiguration('p1', ACTOR, 'MAIL', { security_scheme: 'no_auth' })).rejects.toThrow(
        SecuritySchemeNotSupportedError,
      );
      expect(rows.updates).toEqual([]);
    });

    it('404 for a configuration the project does not have, and when the row went away meanwhile', async () => {
      await expect(service.updateAppConfiguration('p2', ACTOR, 'MAIL', { enabled: false })).rejects.toBeInstanceOf(
        AppConfigurationNotFoundError,
      );
      const { findForProject } = rows.repository;
      rows.repository.findForProject = async (projectId, appName) => {
        const row = await findForProject(projectId, appName);
        rows.configurations.clear();
        return row;
      };
      await expect(service.updateAppConfiguration('p1', ACTOR, 'MAIL', { enabled: false })).rejects.toBeInstanceOf(
        AppConfigurationNotFoundError,
      );
      expect(rows.published).toEqual([]);
    });
  });
});
