import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { hasBearerSecretShape, hashBearerSecret } from '../../libs/common/src/index.js';
import { AppConfig } from '../config/app-config.js';
import { KnownKeys } from './known-keys.js';
import { ApiKeyInvalidError } from './projects.errors.js';
import { ProjectsRepository } from './projects.repository.js';
import { RefusedCredentials } from './refused-credentials.js';

export const API_KEY_HEADER = 'X-API-KEY';
export const API_KEY_PREFIX = 'pb_';

/** Who a request's API key belongs to: `request.user` on every secured route. */
export interface ApiKeyPrincipal {
  projectId: string;
  apiKeyId: string;
}

interface CachedKey extends ApiKeyPrincipal {
  /** When the key stops working (ms since the epoch); null for never. */
  expiresAt: number | null;
  /** When `last_used_at` was last known to be written (ms since the epoch); 0 for never. */
  lastUsedAt: number;
}

const CACHE_MAX_KEYS = 10_000;
/** `last_used_at` is written at most this often per key, so that a request costs no write. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The `X-API-KEY` header's check (ApiKeyGuard reads the header and calls `validate`), which keeps
 * the keys seen recently in memory, by the key itself: a hit costs one map lookup instead of a
 * SHA-256 and a query per request. The keys are already in this process's memory while their
 * requests run; they are never logged or written anywhere. An entry lives API_KEY_CACHE_TTL_MS at
 * most (less when the key expires sooner), which bounds how long a revocation made elsewhere takes
 * to reach this instance. Refused keys are remembered apart (RefusedCredentials), so that a flood of wrong
 * keys neither evicts valid ones nor reaches the database twice for the same value; a value not shaped like a
 * key is refused before any of this.
 */
@Injectable()
export class HeaderApiKeyStrategy {
  private readonly cache: LRUCache<string, CachedKey>;
  private readonly refused = new RefusedCredentials();

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly known: KnownKeys,
    config: AppConfig,
  ) {
    this.cache = new LRUCache<string, CachedKey>({
      max: CACHE_MAX_KEYS,
      ttl: config.API_KEY_CACHE_TTL_MS,
      // lru-cache's default (1 ms) keeps the clock it read for 1 ms and arms a timer to forget it: at a few
      // thousand requests per second that is one timer per request (about 1.5 µs of the 2026-11-26 profile);
      // reading performance.now() on every look-up costs less.
      ttlResolution: 0,
      // Concurrent requests with a key not yet cached share one lookup.
      fetchMethod: async (apiKey, _stale, { options }) => {
        const row = await this.projects.findActiveKeyByHash(hashBearerSecret(apiKey));
        if (!row) {
          return undefined;
        }
        const expiresAt = row.expires_at?.getTime() ?? null;
        if (expiresAt !== null) {
          options.ttl = Math.max(1, Math.min(config.API_KEY_CACHE_TTL_MS, expiresAt - Date.now()));
        }
        return {
          projectId: row.project_id,
          apiKeyId: row.id,
          expiresAt,
          lastUsedAt: row.last_used_at?.getTime() ?? 0,
        };
      },
    });
  }

  /**
   * The key's project, or ApiKeyInvalidError for unknown, revoked and expired keys alike.
   * A cached key is answered without a promise (`get`); only a miss goes through `fetch`, which shares one
   * lookup among concurrent requests (the async path costs about 3 µs per request more, 2026-11-26 profile).
   */
  validate(apiKey: string): ApiKeyPrincipal | Promise<ApiKeyPrincipal> {
    const cached = this.cache.get(apiKey);
    if (cached) {
      return this.accept(apiKey, cached);
    }
    if (!hasBearerSecretShape(apiKey, API_KEY_PREFIX) || this.refused.has(apiKey)) {
      throw new ApiKeyInvalidError();
    }
    return this.cache.fetch(apiKey).then((key) => this.accept(apiKey, key));
  }

  /**
   * Whether this header value is known to fail without asking the database: no value, a value not shaped like a
   * key, one refused recently, or one whose hash no usable key has (KnownKeys). A key checked recently and still
   * valid is never refused here. `validate` itself does not consult KnownKeys: for an address within its failure
   * budget, a key created on another instance a moment ago must pass even before this instance has heard of it.
   */
  refusesAtOnce(apiKey: string | undefined): boolean {
    if (apiKey === undefined || apiKey === '') {
      return true;
    }
    return (
      !this.cache.has(apiKey) &&
      (!hasBearerSecretShape(apiKey, API_KEY_PREFIX) || this.refused.has(apiKey) || !this.known.mayExist(apiKey))
    );
  }

  private accept(apiKey: string, key: CachedKey | undefined): ApiKeyPrincipal {
    const now = Date.now();
    if (!key || (key.expiresAt !== null && key.expiresAt <= now)) {
      this.refused.add(apiKey);
      throw new ApiKeyInvalidError();
    }
    if (now - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
      key.lastUsedAt = now;
      this.projects.touchKey(key.apiKeyId, new Date(now), LAST_USED_RESOLUTION_MS).catch(() => {
        // A lost `last_used_at` is written again by a later request; never fail a request for it.
        key.lastUsedAt = 0;
      });
    }
    return { projectId: key.projectId, apiKeyId: key.apiKeyId };
  }

  /** Forgets a revoked key at once on this instance (other instances within API_KEY_CACHE_TTL_MS). */
  forgetKey(apiKeyId: string): void {
    for (const [apiKey, entry] of this.cache.entries()) {
      if (entry.apiKeyId === apiKeyId) {
        this.cache.delete(apiKey);
      }
    }
  }
}
