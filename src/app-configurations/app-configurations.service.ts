import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppEntity } from '../apps/app.entity.js';
import { AppNotFoundError } from '../apps/apps.errors.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { SECURITY_SCHEMES, type SecurityScheme } from '../apps/security-scheme.js';
import type { Actor } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import type { AppConfigurationEntity } from './app-configuration.entity.js';
import { checkExtraCredentials, checkServerVariables } from './document-choices.js';
import {
  type AppConfigurationCreate,
  type AppConfigurationDeleted,
  type AppConfigurationPublic,
  type AppConfigurationsListQuery,
  type AppConfigurationUpdate,
  MASKED_SECRET,
  type SecuritySchemeOverrides,
  type SecuritySchemeOverridesPublic,
} from './app-configurations.dto.js';
import {
  AppConfigurationExistsError,
  AppConfigurationNotFoundError,
  SecuritySchemeNotSupportedError,
  UnknownEnabledFunctionsError,
} from './app-configurations.errors.js';
import {
  AppConfigurationsRepository,
  type ConfigurationChanges,
  type NewAppConfiguration,
} from './app-configurations.repository.js';

/** Sealed JSON in `app_configurations.secrets`: the secret parts of the overrides. */
export interface AppConfigurationSecrets {
  oauth2_client_secret?: string;
  /** Values of `extra_credentials`, by the document's scheme names. */
  extra_credentials?: Record<string, string>;
}

interface Enablement {
  all_functions_enabled: boolean;
  enabled_functions: string[];
}

@Injectable()
export class AppConfigurationsService {
  constructor(
    private readonly configurations: AppConfigurationsRepository,
    private readonly apps: AppsRepository,
    private readonly functions: FunctionsRepository,
    private readonly secretBox: SecretBox,
    private readonly changes: ChangeNotifications,
    private readonly audit: AuditService,
  ) {}

  async createAppConfiguration(
    projectId: string,
    actor: Actor,
    input: AppConfigurationCreate,
  ): Promise<AppConfigurationPublic> {
    const app = await this.visibleApp(projectId, input.app_name);
    assertSchemeSupported(app, input.security_scheme);
    if (await this.configurations.findForProject(projectId, app.name)) {
      throw new AppConfigurationExistsError(app.name);
    }
    const enablement = await this.enablement(
      projectId,
      app.name,
      input.all_functions_enabled ?? true,
      input.enabled_functions ?? [],
    );
    const { stored, clientSecret } = plainOverrides(input.security_scheme_overrides);
    const serverVariables = await checkServerVariables(this.functions, app.name, input.server_variables);
    const extras = await checkExtraCredentials(this.functions, app.name, input.extra_credentials);
    const secrets = this.seal({ oauth2_client_secret: clientSecret, extra_credentials: extras });
    const configuration: NewAppConfiguration = {
      id: randomUUID(),
      project_id: projectId,
      app_name: app.name,
      security_scheme: input.security_scheme,
      security_scheme_overrides: stored,
      secrets,
      server_variables: serverVariables,
      extra_credential_names: Object.keys(extras ?? {}).sort(),
      enabled: input.enabled ?? true,
      owner_execution_limit: input.owner_execution_limit ? input.owner_execution_limit : null,
      ...enablement,
    };
    if (!(await this.configurations.insert(configuration))) {
      throw new AppConfigurationExistsError(app.name);
    }
    const created = await this.getAppConfiguration(projectId, app.name);
    // Recorded right after the insert (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor,
      action: 'app_configuration.created',
      resourceId: created.id,
      after: created,
    });
    await this.changes.publish('app_configurations', projectId);
    return created;
  }

  async listAppConfigurations(projectId: string, query: AppConfigurationsListQuery): Promise<AppConfigurationPublic[]> {
    const rows = await this.configurations.listForProject(projectId, {
      appNames: query.app_names,
      limit: query.limit,
      offset: query.offset,
    });
    return rows.map(toPublic);
  }

  async getAppConfiguration(projectId: string, appName: string): Promise<AppConfigurationPublic> {
    return toPublic(await this.existing(projectId, appName));
  }

  /**
   * Absent and null fields keep their value; rules 1–3 apply to the state that results. Only the
   * columns the input changes are written, so a concurrent update of the others is not undone.
   */
  async updateAppConfiguration(
    projectId: string,
    actor: Actor,
    appName: string,
    input: AppConfigurationUpdate,
  ): Promise<AppConfigurationPublic> {
    const configuration = await this.existing(projectId, appName);
    const scheme = input.security_scheme ?? undefined;
    const listed = input.enabled_functions ?? undefined;
    const overrides = input.security_scheme_overrides ?? undefined;
    const allInput = input.all_functions_enabled ?? undefined;
    const allEnabled = allInput ?? configuration.all_functions_enabled;
    const changes: ConfigurationChanges = {};
    if (scheme !== undefined) {
      assertSchemeSupported(await this.visibleApp(projectId, configuration.app_name), scheme);
      changes.security_scheme = scheme;
    } else if (!allEnabled && listed !== undefined) {
      // A new list is checked against the catalogue, which needs the app to still be visible.
      await this.visibleApp(projectId, configuration.app_name);
    }
    if (allInput !== undefined || listed !== undefined) {
      const enablement = await this.enablement(
        projectId,
        configuration.app_name,
        allEnabled,
        listed ?? configuration.enabled_functions,
        listed !== undefined,
      );
      changes.all_functions_enabled = enablement.all_functions_enabled;
      // Turning "all" off without a list keeps the stored list, which is then not written.
      if (enablement.all_functions_enabled || listed !== undefined) {
        changes.enabled_functions = enablement.enabled_functions;
      }
    }
    const extrasInput = input.extra_credentials ?? undefined;
    if (overrides !== undefined || extrasInput !== undefined) {
      // One sealed object holds both secrets: the one not changed is kept as it was (opened only when there is one).
      const keepsOther =
        overrides === undefined
          ? configuration.security_scheme_overrides?.oauth2 !== undefined
          : extrasInput === undefined && configuration.extra_credential_names.length > 0;
      const kept: AppConfigurationSecrets =
        keepsOther && configuration.secrets
          ? this.secretBox.openJson<AppConfigurationSecrets>(configuration.secrets)
          : {};
      if (overrides !== undefined) {
        const { stored, clientSecret } = plainOverrides(overrides);
        changes.security_scheme_overrides = stored;
        kept.oauth2_client_secret = clientSecret;
      }
      if (extrasInput !== undefined) {
        const extras = await checkExtraCredentials(this.functions, configuration.app_name, extrasInput);
        changes.extra_credential_names = Object.keys(extras ?? {}).sort();
        kept.extra_credentials = extras;
      }
      changes.secrets = this.seal(kept);
    }
    if (input.server_variables !== undefined && input.server_variables !== null) {
      changes.server_variables = await checkServerVariables(
        this.functions,
        configuration.app_name,
        input.server_variables,
      );
    }
    if (input.enabled !== undefined && input.enabled !== null) {
      changes.enabled = input.enabled;
    }
    if (input.owner_execution_limit !== undefined && input.owner_execution_limit !== null) {
      changes.owner_execution_limit = input.owner_execution_limit === 0 ? null : input.owner_execution_limit;
    }
    if (Object.keys(changes).length === 0) {
      return toPublic(configuration);
    }
    const updated = await this.configurations.update(projectId, configuration.app_name, changes);
    if (!updated) {
      throw new AppConfigurationNotFoundError(appName);
    }
    // Recorded right after the update (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor,
      action: 'app_configuration.updated',
      resourceId: updated.id,
      before: configuration,
      after: overrides?.oauth2 ? { ...updated, client_secret_replaced: true } : updated,
    });
    await this.changes.publish('app_configurations', projectId);
    return toPublic(updated);
  }

  async deleteAppConfiguration(projectId: string, actor: Actor, appName: string): Promise<AppConfigurationDeleted> {
    // Recorded in the deletion's transaction: the configuration and each linked account that went with it.
    const deleted = await this.configurations.deleteWithLinkedAccounts(
      projectId,
      appName,
      async (manager, configuration, accounts) => {
        for (const account of accounts) {
          await this.audit.record(
            { projectId, actor, action: 'linked_account.deleted', resourceId: account.id, before: account },
            manager,
          );
        }
        await this.audit.record(
          {
            projectId,
            actor,
            action: 'app_configuration.deleted',
            resourceId: configuration.id,
            before: { ...configuration, deleted_linked_accounts: accounts.length },
          },
          manager,
        );
      },
    );
    if (deleted === null) {
      throw new AppConfigurationNotFoundError(appName);
    }
    await this.changes.publish('app_configurations', projectId);
    await this.changes.publish('linked_accounts', projectId);
    return { app_name: appName, deleted_linked_accounts: deleted };
  }

  private async existing(projectId: string, appName: string): Promise<AppConfigurationEntity> {
    const configuration = await this.configurations.findForProject(projectId, appName);
    if (!configuration) {
      throw new AppConfigurationNotFoundError(appName);
    }
    return configuration;
  }

  private async visibleApp(projectId: string, name: string): Promise<AppEntity> {
    const app = await this.apps.findVisibleByName(name, projectId);
    if (!app) {
      throw new AppNotFoundError(name);
    }
    return app;
  }

  /**
   * Rules 1–3: all enabled ignores (and stores no) list; otherwise exactly the listed functions,
   * which must be visible functions of the app. `check` is false for a list already stored.
   */
  private async enablement(
    projectId: string,
    appName: string,
    all: boolean,
    listed: string[],
    check = true,
  ): Promise<Enablement> {
    if (all) {
      return { all_functions_enabled: true, enabled_functions: [] };
    }
    const names = [...new Set(listed)];
    if (check && names.length > 0) {
      const known = new Set(await this.functions.visibleNamesOfApp(appName, projectId));
      const unknown = names.filter((name) => !known.has(name));
      if (unknown.length > 0) {
        throw new UnknownEnabledFunctionsError(appName, unknown);
      }
    }
    return { all_functions_enabled: false, enabled_functions: names };
  }

  /** The secrets sealed as one value; null when there is none. */
  private seal(secrets: AppConfigurationSecrets): string | null {
    const present = Object.fromEntries(Object.entries(secrets).filter(([, value]) => value !== undefined));
    return Object.keys(present).length > 0 ? this.secretBox.sealJson(present) : null;
  }
}

/** Splits overrides into what may sit in plain jsonb and the client secret, which is sealed. */
function plainOverrides(overrides: SecuritySchemeOverrides | undefined): {
  stored: AppConfigurationEntity['security_scheme_overrides'];
  clientSecret: string | undefined;
} {
  const oauth2 = overrides?.oauth2;
  if (!oauth2) {
    return { stored: {}, clientSecret: undefined };
  }
  const plain: Record<string, unknown> = { client_id: oauth2.client_id };
  // Optional fields sent as null are not stored at all.
  if (typeof oauth2.redirect_url === 'string') {
    plain.redirect_url = oauth2.redirect_url;
  }
  if (typeof oauth2.scope === 'string') {
    plain.scope = oauth2.scope;
  }
  return { stored: { oauth2: plain }, clientSecret: oauth2.client_secret };
}

function assertSchemeSupported(app: AppEntity, scheme: SecurityScheme): void {
  // In the contract's order: jsonb does not keep the catalogue's key order.
  const supported = SECURITY_SCHEMES.filter((known) => app.security_schemes?.[known] !== undefined);
  if (!supported.includes(scheme)) {
    throw new SecuritySchemeNotSupportedError(app.name, scheme, supported);
  }
}

function toPublic(row: AppConfigurationEntity): AppConfigurationPublic {
  const overrides: SecuritySchemeOverridesPublic = {};
  const oauth2 = row.security_scheme_overrides?.oauth2;
  if (oauth2) {
    overrides.oauth2 = {
      client_id: String(oauth2.client_id),
      client_secret: MASKED_SECRET,
      ...(typeof oauth2.redirect_url === 'string' ? { redirect_url: oauth2.redirect_url } : {}),
      ...(typeof oauth2.scope === 'string' ? { scope: oauth2.scope } : {}),
    };
  }
  return {
    id: row.id,
    project_id: row.project_id,
    app_name: row.app_name,
    security_scheme: row.security_scheme,
    security_scheme_overrides: overrides,
    server_variables: row.server_variables ?? {},
    extra_credentials: Object.fromEntries((row.extra_credential_names ?? []).map((name) => [name, MASKED_SECRET])),
    enabled: row.enabled,
    all_functions_enabled: row.all_functions_enabled,
    enabled_functions: row.enabled_functions,
    owner_execution_limit: row.owner_execution_limit,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
