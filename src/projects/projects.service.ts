import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { hashBearerSecret, newBearerSecret } from '../../libs/common/src/index.js';
import type { Actor } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { ChangeNotifications } from '../database/change-notifications.js';
import { API_KEY_PREFIX, HeaderApiKeyStrategy } from './header-api-key.strategy.js';
import { ApiKeyExpiryInPastError, ApiKeyNotFoundError, ProjectNotFoundError } from './projects.errors.js';
import type { ProjectEntity } from './project.entity.js';
import type { ProjectPublic, ProjectUpdate } from './projects.dto.js';
import { type NewApiKey, ProjectsRepository } from './projects.repository.js';

export interface CreatedProject {
  project_id: string;
  api_key: string;
  api_key_id: string;
}

export interface CreatedApiKey {
  project_id: string;
  api_key: string;
  api_key_id: string;
  expires_at: string | null;
}

/** What is shown of a key after its creation: never the key nor its hash. */
export interface ApiKeySummary {
  id: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly apiKeys: HeaderApiKeyStrategy,
    private readonly audit: AuditService,
    private readonly changes: ChangeNotifications,
  ) {}

  async createProject(actor: Actor, name: string): Promise<CreatedProject> {
    const projectId = randomUUID();
    const { key, row } = newKey(projectId, null);
    // Recorded in the creation's transaction: the project and its first key.
    await this.projects.createWithKey({ id: projectId, name }, row, async (manager) => {
      await this.audit.record(
        { projectId, actor, action: 'project.created', resourceId: projectId, after: { name } },
        manager,
      );
      await this.audit.record({ projectId, actor, action: 'api_key.created', resourceId: row.id, after: row }, manager);
    });
    // Before the key is handed out: every instance's KnownKeys reads the usable keys again.
    await this.changes.publish('api_keys', projectId);
    return { project_id: projectId, api_key: key, api_key_id: row.id };
  }

  async getProject(projectId: string): Promise<ProjectPublic> {
    const project = await this.projects.findById(projectId);
    if (!project) {
      throw new ProjectNotFoundError(projectId);
    }
    return toPublic(project);
  }

  /** Only the fields present change; null clears a branding field (the DTO checked each value's rule). */
  async updateProject(projectId: string, actor: Actor, update: ProjectUpdate): Promise<ProjectPublic> {
    const before = await this.projects.findById(projectId);
    const changes: Parameters<ProjectsRepository['update']>[1] = {};
    if (update.name !== undefined && update.name !== null) {
      changes.name = update.name;
    }
    for (const field of ['display_name', 'logo_url', 'accent_color', 'home_url'] as const) {
      if (update[field] !== undefined) {
        changes[field] = field === 'accent_color' ? (update[field]?.toLowerCase() ?? null) : (update[field] ?? null);
      }
    }
    const project = await this.projects.update(projectId, changes);
    if (!project) {
      throw new ProjectNotFoundError(projectId);
    }
    // Recorded right after the update (a single statement, no transaction to share); only changed fields.
    await this.audit.record({
      projectId,
      actor,
      action: 'project.updated',
      resourceId: projectId,
      before,
      after: project,
    });
    return toPublic(project);
  }

  async hasProjects(): Promise<boolean> {
    return (await this.projects.count()) > 0;
  }

  /** `expiresAt`: from then on the key is refused like an unknown one; it must lie in the future. */
  async createApiKey(actor: Actor, projectId: string, expiresAt: Date | null = null): Promise<CreatedApiKey> {
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new ApiKeyExpiryInPastError(expiresAt);
    }
    if (!(await this.projects.exists(projectId))) {
      throw new ProjectNotFoundError(projectId);
    }
    const { key, row } = newKey(projectId, expiresAt);
    await this.projects.insertKey(row);
    // Recorded right after the insert (a single statement, no transaction to share).
    await this.audit.record({ projectId, actor, action: 'api_key.created', resourceId: row.id, after: row });
    await this.changes.publish('api_keys', projectId);
    return { project_id: projectId, api_key: key, api_key_id: row.id, expires_at: expiresAt?.toISOString() ?? null };
  }

  async listApiKeys(projectId: string): Promise<ApiKeySummary[]> {
    if (!(await this.projects.exists(projectId))) {
      throw new ProjectNotFoundError(projectId);
    }
    return (await this.projects.listKeys(projectId)).map((row) => ({
      id: row.id,
      created_at: row.created_at.toISOString(),
      expires_at: row.expires_at?.toISOString() ?? null,
      last_used_at: row.last_used_at?.toISOString() ?? null,
      revoked_at: row.revoked_at?.toISOString() ?? null,
    }));
  }

  /** Refused at once on this instance; other instances refuse it within API_KEY_CACHE_TTL_MS. */
  async revokeApiKey(actor: Actor, keyId: string): Promise<void> {
    const revoked = await this.projects.revokeKey(keyId);
    if (!revoked) {
      throw new ApiKeyNotFoundError(keyId);
    }
    this.apiKeys.forgetKey(revoked.id);
    await this.changes.publish('api_keys', revoked.project_id);
    // Recorded right after the update (no transaction to share).
    await this.audit.record({
      projectId: revoked.project_id,
      actor,
      action: 'api_key.revoked',
      resourceId: revoked.id,
      before: revoked,
      after: { ...revoked, revoked_at: new Date() },
    });
  }
}

function toPublic(project: ProjectEntity): ProjectPublic {
  return {
    id: project.id,
    name: project.name,
    display_name: project.display_name,
    logo_url: project.logo_url,
    accent_color: project.accent_color,
    home_url: project.home_url,
    created_at: project.created_at.toISOString(),
    updated_at: project.updated_at.toISOString(),
  };
}

function newKey(projectId: string, expiresAt: Date | null): { key: string; row: NewApiKey } {
  const key = newBearerSecret(API_KEY_PREFIX);
  return {
    key,
    row: {
      id: randomUUID(),
      project_id: projectId,
      key_hash: hashBearerSecret(key),
      key_prefix: key.slice(0, 10),
      expires_at: expiresAt,
    },
  };
}
