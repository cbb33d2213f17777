import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiKeyInvalidError, ApiKeyNotFoundError, ProjectNotFoundError } from './projects.errors.js';
import { ProjectsRepository } from './projects.repository.js';

export interface CreatedProject {
  project_id: string;
  api_key: string;
  api_key_id: string;
}

export interface CreatedApiKey {
  project_id: string;
  api_key: string;
  api_key_id: string;
}

/** How long an authenticated key is trusted without asking the database again. */
const AUTH_CACHE_TTL_MS = 5_000;
const AUTH_CACHE_MAX = 10_000;

@Injectable()
export class ProjectsService {
  /**
   * Keys seen recently, by the key itself: a hit costs one map lookup instead of a SHA-256 per
   * request. The keys are already in this process's memory while their requests run; they are never
   * logged or written anywhere.
   */
  private readonly authCache = new Map<string, { projectId: string; keyId: string; expires: number }>();

  constructor(private readonly projects: ProjectsRepository) {}

  async createProject(name: string): Promise<CreatedProject> {
    const projectId = randomUUID();
    const { key, row } = newKey(projectId);
    await this.projects.createWithKey({ id: projectId, name }, row);
    return { project_id: projectId, api_key: key, api_key_id: row.id };
  }

  async hasProjects(): Promise<boolean> {
    return (await this.projects.count()) > 0;
  }

  async createApiKey(projectId: string): Promise<CreatedApiKey> {
    if (!(await this.projects.exists(projectId))) {
      throw new ProjectNotFoundError(projectId);
    }
    const { key, row } = newKey(projectId);
    await this.projects.insertKey(row);
    return { project_id: projectId, api_key: key, api_key_id: row.id };
  }

  async revokeApiKey(keyId: string): Promise<void> {
    const revoked = await this.projects.revokeKey(keyId);
    if (!revoked) {
      throw new ApiKeyNotFoundError(keyId);
    }
    for (const [key, entry] of this.authCache) {
      if (entry.keyId === revoked.id) {
        this.authCache.delete(key);
      }
    }
  }

  /** The project a key belongs to; unknown and revoked keys are refused alike. */
  async authenticate(apiKey: string): Promise<string> {
    const now = Date.now();
    const cached = this.authCache.get(apiKey);
    if (cached && cached.expires > now) {
      return cached.projectId;
    }
    const row = await this.projects.findActiveKeyByHash(hashKey(apiKey));
    if (!row) {
      this.authCache.delete(apiKey);
      throw new ApiKeyInvalidError();
    }
    if (this.authCache.size >= AUTH_CACHE_MAX) {
      this.authCache.clear();
    }
    this.authCache.set(apiKey, { projectId: row.project_id, keyId: row.id, expires: now + AUTH_CACHE_TTL_MS });
    return row.project_id;
  }
}

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function newKey(projectId: string) {
  const key = `pb_${randomBytes(32).toString('base64url')}`;
  return {
    key,
    row: { id: randomUUID(), project_id: projectId, key_hash: hashKey(key), key_prefix: key.slice(0, 10) },
  };
}
