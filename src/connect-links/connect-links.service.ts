import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { hashBearerSecret, newBearerSecret, SecretBox } from '../../libs/common/src/index.js';
import { AppConfigurationNotFoundError } from '../app-configurations/app-configurations.errors.js';
import { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import { AppNotFoundError } from '../apps/apps.errors.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { type Actor, SYSTEM_ACTOR } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { RedirectAllowList } from '../oauth2/redirect-allow-list.js';
import type { ConnectLinkEntity } from './connect-link.entity.js';
import { ConnectLinkWebhooks, type ConnectLinkEvent } from './connect-link-webhooks.js';
import {
  type ConnectLinkCreate,
  type ConnectLinkCreated,
  type ConnectLinkPublic,
  type ConnectLinkStatus,
  EXPIRES_DEFAULT_SECONDS,
  EXPIRES_MAX_SECONDS,
  EXPIRES_MIN_SECONDS,
} from './connect-links.dto.js';
import {
  AppConfigurationDisabledForLinkError,
  ConnectLinkNotFoundError,
  ConnectLinkNotPendingError,
} from './connect-links.errors.js';
import { ConnectLinksRepository } from './connect-links.repository.js';

export const CONNECT_PATH = '/connect';

/** What other modules (the MCP server) give to create a link; camelCase, unlike the wire format. */
export interface ConnectLinkRequest {
  appName: string;
  ownerId: string;
  /** How the page names the owner instead of the id. */
  ownerDisplayName?: string;
  afterLinkRedirectUrl?: string;
  webhookUrl?: string;
  expiresInSeconds?: number;
}

export interface NewConnectLinkResult {
  id: string;
  /** The page for the end user; it holds the single-use token. */
  url: string;
  expiresAt: Date;
  /** Only with a webhook URL: the key of its signatures. */
  webhookSecret?: string;
}

/** A stored link's status as callers see it: a pending link past its expiry is expired. */
export function statusOf(link: ConnectLinkEntity, now = Date.now()): ConnectLinkStatus {
  if (link.status === 'pending' && link.expires_at.getTime() <= now) {
    return 'expired';
  }
  return link.status;
}

/**
 * Connect links: a developer (or the MCP server) asks for a link, hands it to an end user, and the
 * user links their own account on Patchbay's page (see ConnectPageService) — credentials never pass
 * through the developer's systems. This service holds the links' life cycle.
 */
@Injectable()
export class ConnectLinksService {
  constructor(
    private readonly links: ConnectLinksRepository,
    private readonly apps: AppsRepository,
    private readonly configurations: AppConfigurationsRepository,
    private readonly redirects: RedirectAllowList,
    private readonly webhooks: ConnectLinkWebhooks,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  async createConnectLink(projectId: string, actor: Actor, input: ConnectLinkCreate): Promise<ConnectLinkCreated> {
    const created = await this.create(projectId, actor, {
      appName: input.app_name,
      ownerId: input.linked_account_owner_id,
      ownerDisplayName: input.owner_display_name,
      afterLinkRedirectUrl: input.after_link_redirect_url,
      webhookUrl: input.webhook_url,
      expiresInSeconds: input.expires_in_seconds,
    });
    return {
      id: created.id,
      url: created.url,
      expires_at: created.expiresAt.toISOString(),
      ...(created.webhookSecret ? { webhook_secret: created.webhookSecret } : {}),
    };
  }

  /**
   * Creates a pending link for the owner's account of an app the project configured (and enabled).
   * Usable by other modules; input is trusted to be shaped (the HTTP layer validated it) but every
   * rule is checked here.
   */
  async create(projectId: string, actor: Actor, request: ConnectLinkRequest): Promise<NewConnectLinkResult> {
    const app = await this.apps.findVisibleByName(request.appName, projectId);
    if (!app) {
      throw new AppNotFoundError(request.appName);
    }
    const configuration = await this.configurations.findForProject(projectId, app.name);
    if (!configuration) {
      throw new AppConfigurationNotFoundError(app.name);
    }
    if (!configuration.enabled) {
      throw new AppConfigurationDisabledForLinkError(app.name);
    }
    if (request.afterLinkRedirectUrl) {
      this.redirects.check(request.afterLinkRedirectUrl, 'after_link_redirect_url');
    }
    if (request.webhookUrl) {
      this.redirects.check(request.webhookUrl, 'webhook_url');
    }
    const seconds = Math.min(
      EXPIRES_MAX_SECONDS,
      Math.max(EXPIRES_MIN_SECONDS, request.expiresInSeconds ?? EXPIRES_DEFAULT_SECONDS),
    );
    const id = randomUUID();
    const token = newBearerSecret();
    const webhookSecret = request.webhookUrl ? `whsec_${randomBytes(24).toString('base64url')}` : undefined;
    const expiresAt = new Date(Date.now() + seconds * 1000);
    const row = {
      id,
      project_id: projectId,
      app_name: app.name,
      linked_account_owner_id: request.ownerId,
      owner_display_name: request.ownerDisplayName?.trim() || null,
      token_hash: hashBearerSecret(token),
      status: 'pending',
      linked_account_id: null,
      after_link_redirect_url: request.afterLinkRedirectUrl ?? null,
      webhook_url: request.webhookUrl ?? null,
      webhook_secret: webhookSecret ? this.secretBox.seal(webhookSecret) : null,
      expires_at: expiresAt,
    } as const;
    await this.links.insert(row);
    // Recorded right after the insert (a single statement, no transaction to share).
    await this.audit.record({ projectId, actor, action: 'connect_link.created', resourceId: id, after: row });
    const url = `${this.config.publicBaseUrl}${CONNECT_PATH}/${id}?token=${token}`;
    return { id, url, expiresAt, ...(webhookSecret ? { webhookSecret } : {}) };
  }

  async getConnectLink(projectId: string, id: string): Promise<ConnectLinkPublic> {
    return toPublic(await this.existing(projectId, id));
  }

  async revokeConnectLink(projectId: string, actor: Actor, id: string): Promise<void> {
    if (!(await this.links.revoke(projectId, id))) {
      throw new ConnectLinkNotPendingError(id, statusOf(await this.existing(projectId, id)));
    }
    // Recorded right after the update (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor,
      action: 'connect_link.revoked',
      resourceId: id,
      before: { status: 'pending' },
      after: { status: 'revoked' },
    });
  }

  /**
   * Uses the link up for the account it linked and tells the webhook. False when the link stopped
   * being usable meanwhile (a concurrent completion won, or it expired or was revoked).
   */
  async complete(link: ConnectLinkEntity, linkedAccountId: string): Promise<boolean> {
    if (!(await this.links.complete(link.id, linkedAccountId))) {
      return false;
    }
    await this.recordCompleted(link, linkedAccountId);
    this.notify(link, { event: 'connect_link.completed', linked_account_id: linkedAccountId });
    return true;
  }

  /**
   * Takes the link for one form post before anything is stored, so that of two simultaneous posts
   * only one links credentials. Then `attach` (success) or `release` (failure) must follow.
   */
  claim(link: ConnectLinkEntity): Promise<boolean> {
    return this.links.complete(link.id, null);
  }

  async attach(link: ConnectLinkEntity, linkedAccountId: string): Promise<void> {
    await this.links.attachAccount(link.id, linkedAccountId);
    await this.recordCompleted(link, linkedAccountId);
    this.notify(link, { event: 'connect_link.completed', linked_account_id: linkedAccountId });
  }

  /** Recorded right after the link is used up (a single statement, no transaction to share); by the end user. */
  private recordCompleted(link: ConnectLinkEntity, linkedAccountId: string): Promise<void> {
    return this.audit.record({
      projectId: link.project_id,
      actor: SYSTEM_ACTOR,
      action: 'connect_link.completed',
      resourceId: link.id,
      before: { status: 'pending' },
      after: { status: 'completed', linked_account_id: linkedAccountId },
    });
  }

  release(link: ConnectLinkEntity): Promise<void> {
    return this.links.release(link.id);
  }

  /** Tells the webhook (if any) that an attempt on the page failed; the link stays usable. */
  fail(link: ConnectLinkEntity, error: string): void {
    this.notify(link, { event: 'connect_link.failed', linked_account_id: null, error });
  }

  private notify(link: ConnectLinkEntity, event: Pick<ConnectLinkEvent, 'event' | 'linked_account_id' | 'error'>) {
    if (!link.webhook_url || !link.webhook_secret) {
      return;
    }
    this.webhooks.send(link.webhook_url, this.secretBox.open(link.webhook_secret), {
      event: event.event,
      connect_link_id: link.id,
      app_name: link.app_name,
      linked_account_owner_id: link.linked_account_owner_id,
      linked_account_id: event.linked_account_id,
      ...(event.error ? { error: event.error } : {}),
    });
  }

  private async existing(projectId: string, id: string): Promise<ConnectLinkEntity> {
    const link = await this.links.findForProject(projectId, id);
    if (!link) {
      throw new ConnectLinkNotFoundError(id);
    }
    return link;
  }
}

function toPublic(link: ConnectLinkEntity): ConnectLinkPublic {
  return {
    id: link.id,
    app_name: link.app_name,
    linked_account_owner_id: link.linked_account_owner_id,
    ...(link.owner_display_name ? { owner_display_name: link.owner_display_name } : {}),
    status: statusOf(link),
    ...(link.linked_account_id ? { linked_account_id: link.linked_account_id } : {}),
    expires_at: link.expires_at.toISOString(),
  };
}
