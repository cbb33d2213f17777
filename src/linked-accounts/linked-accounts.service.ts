import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretBox } from '../../libs/common/src/index.js';
import type { AppConfigurationEntity } from '../app-configurations/app-configuration.entity.js';
import type { AppEntity } from '../apps/app.entity.js';
import { AppNotFoundError } from '../apps/apps.errors.js';
import { AppsRepository } from '../apps/apps.repository.js';
import type { SecurityScheme } from '../apps/security-scheme.js';
import type { Actor } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import type { LinkedAccountCredentials, OAuth2Credentials } from './credentials.js';
import type { LinkedAccountEntity } from './linked-account.entity.js';
import type {
  LinkedAccountAPIKeyCreate,
  LinkedAccountHTTPBasicCreate,
  LinkedAccountHTTPBearerCreate,
  LinkedAccountNoAuthCreate,
  LinkedAccountPublic,
  LinkedAccountsListQuery,
  LinkedAccountUpdate,
} from './linked-accounts.dto.js';
import {
  LinkedAccountExistsError,
  LinkedAccountNotFoundError,
  SecuritySchemeMismatchError,
} from './linked-accounts.errors.js';
import { LinkedAccountsRepository } from './linked-accounts.repository.js';

@Injectable()
export class LinkedAccountsService {
  constructor(
    private readonly accounts: LinkedAccountsRepository,
    private readonly configurations: AppConfigurationsRepository,
    private readonly apps: AppsRepository,
    private readonly secretBox: SecretBox,
    private readonly changes: ChangeNotifications,
    private readonly audit: AuditService,
  ) {}

  linkNoAuthAccount(projectId: string, actor: Actor, input: LinkedAccountNoAuthCreate): Promise<LinkedAccountPublic> {
    return this.link(projectId, actor, input, 'no_auth', {});
  }

  linkApiKeyAccount(projectId: string, actor: Actor, input: LinkedAccountAPIKeyCreate): Promise<LinkedAccountPublic> {
    return this.link(projectId, actor, input, 'api_key', { api_key: input.api_key });
  }

  linkHttpBasicAccount(
    projectId: string,
    actor: Actor,
    input: LinkedAccountHTTPBasicCreate,
  ): Promise<LinkedAccountPublic> {
    return this.link(projectId, actor, input, 'http_basic', { username: input.username, password: input.password });
  }

  linkHttpBearerAccount(
    projectId: string,
    actor: Actor,
    input: LinkedAccountHTTPBearerCreate,
  ): Promise<LinkedAccountPublic> {
    return this.link(projectId, actor, input, 'http_bearer', { token: input.token });
  }

  async listLinkedAccounts(projectId: string, query: LinkedAccountsListQuery): Promise<LinkedAccountPublic[]> {
    const rows = await this.accounts.listForProject(projectId, {
      appName: query.app_name,
      ownerId: query.linked_account_owner_id,
    });
    return rows.map(toPublic);
  }

  async getLinkedAccount(projectId: string, id: string): Promise<LinkedAccountPublic> {
    return toPublic(await this.existing(projectId, id));
  }

  async updateLinkedAccount(
    projectId: string,
    actor: Actor,
    id: string,
    input: LinkedAccountUpdate,
  ): Promise<LinkedAccountPublic> {
    const before = await this.existing(projectId, id);
    if (input.enabled === undefined || input.enabled === null) {
      return toPublic(before);
    }
    const account = await this.accounts.setEnabled(projectId, id, input.enabled);
    if (!account) {
      throw new LinkedAccountNotFoundError(id);
    }
    // Recorded right after the update (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor,
      action: 'linked_account.updated',
      resourceId: id,
      before,
      after: account,
    });
    await this.changes.publish('linked_accounts', projectId);
    return toPublic(account);
  }

  async deleteLinkedAccount(projectId: string, actor: Actor, id: string): Promise<void> {
    const before = await this.existing(projectId, id);
    if (!(await this.accounts.deleteForProject(projectId, id))) {
      throw new LinkedAccountNotFoundError(id);
    }
    // Recorded right after the delete (a single statement, no transaction to share).
    await this.audit.record({ projectId, actor, action: 'linked_account.deleted', resourceId: id, before });
    await this.changes.publish('linked_accounts', projectId);
  }

  /**
   * Links (or re-links, keeping the id) the owner's account with tokens from an OAuth 2.0 flow; the
   * caller has checked the app and its configuration. Credentials are sealed.
   */
  async upsertOAuth2Account(
    projectId: string,
    actor: Actor,
    appName: string,
    ownerId: string,
    credentials: OAuth2Credentials,
  ): Promise<LinkedAccountPublic> {
    return this.upsert(projectId, actor, appName, ownerId, 'oauth2', credentials);
  }

  /**
   * Links, or re-links in place (same id, "needs re-linking" cleared), the owner's account with
   * credentials the owner gave on a connect link's page. Same checks as the link endpoints: the app,
   * the project's configuration of it, and its scheme. Credentials are sealed.
   */
  async linkOrRelinkAccount(
    projectId: string,
    actor: Actor,
    appName: string,
    ownerId: string,
    scheme: Exclude<SecurityScheme, 'oauth2'>,
    credentials: LinkedAccountCredentials,
    connectLinkId?: string,
  ): Promise<LinkedAccountPublic> {
    const { app } = await this.configuredApp(projectId, appName, scheme);
    return this.upsert(projectId, actor, app.name, ownerId, scheme, credentials, connectLinkId);
  }

  private async upsert(
    projectId: string,
    actor: Actor,
    appName: string,
    ownerId: string,
    scheme: SecurityScheme,
    credentials: LinkedAccountCredentials | OAuth2Credentials,
    connectLinkId?: string,
  ): Promise<LinkedAccountPublic> {
    const newId = randomUUID();
    const id = await this.accounts.upsertAccount({
      id: newId,
      project_id: projectId,
      app_name: appName,
      linked_account_owner_id: ownerId,
      security_scheme: scheme,
      credentials: this.secretBox.sealJson(credentials),
    });
    const linked = await this.getLinkedAccount(projectId, id);
    // Recorded right after the upsert (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor,
      action: id === newId ? 'linked_account.created' : 'linked_account.relinked',
      resourceId: id,
      after: { ...linked, ...(connectLinkId ? { connect_link_id: connectLinkId } : {}) },
    });
    // A re-link replaces the credentials of an account executions may have cached.
    await this.changes.publish('linked_accounts', projectId);
    return linked;
  }

  /**
   * The visible app and the project's configuration of it, when that configuration uses `scheme`: what
   * every way of linking checks first (link endpoints, connect pages, OAuth 2.0). Typed errors otherwise.
   */
  async configuredApp(
    projectId: string,
    appName: string,
    scheme: SecurityScheme,
  ): Promise<{ app: AppEntity; configuration: AppConfigurationEntity }> {
    const app = await this.apps.findVisibleByName(appName, projectId);
    if (!app) {
      throw new AppNotFoundError(appName);
    }
    const configuration = await this.configurations.findForProject(projectId, app.name);
    if (!configuration) {
      throw new AppConfigurationNotFoundError(app.name);
    }
    if (configuration.security_scheme !== scheme) {
      throw new SecuritySchemeMismatchError(app.name, configuration.security_scheme, scheme);
    }
    return { app, configuration };
  }

  /** Links only through the scheme the project configured for the app; the credentials are sealed. */
  private async link(
    projectId: string,
    actor: Actor,
    input: LinkedAccountNoAuthCreate,
    scheme: SecurityScheme,
    credentials: LinkedAccountCredentials,
  ): Promise<LinkedAccountPublic> {
    const appName = (await this.configuredApp(projectId, input.app_name, scheme)).app.name;
    const ownerId = input.linked_account_owner_id;
    if (await this.accounts.findByOwner(projectId, appName, ownerId)) {
      throw new LinkedAccountExistsError(appName, ownerId);
    }
    const id = randomUUID();
    const inserted = await this.accounts.insert({
      id,
      project_id: projectId,
      app_name: appName,
      linked_account_owner_id: ownerId,
      security_scheme: scheme,
      credentials: this.secretBox.sealJson(credentials),
      enabled: true,
    });
    if (!inserted) {
      throw new LinkedAccountExistsError(appName, ownerId);
    }
    const linked = await this.getLinkedAccount(projectId, id);
    // Recorded right after the insert (a single statement, no transaction to share).
    await this.audit.record({ projectId, actor, action: 'linked_account.created', resourceId: id, after: linked });
    return linked;
  }

  private async existing(projectId: string, id: string): Promise<LinkedAccountEntity> {
    const account = await this.accounts.findForProject(projectId, id);
    if (!account) {
      throw new LinkedAccountNotFoundError(id);
    }
    return account;
  }
}

function toPublic(row: LinkedAccountEntity): LinkedAccountPublic {
  return {
    id: row.id,
    project_id: row.project_id,
    app_name: row.app_name,
    linked_account_owner_id: row.linked_account_owner_id,
    security_scheme: row.security_scheme,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
