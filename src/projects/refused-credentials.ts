import { LRUCache } from 'lru-cache';

const REFUSED_MAX = 10_000;
const REFUSED_TTL_MS = 60_000;

/**
 * Credentials (API keys, MCP tokens) the database recently answered "no such usable credential" for, so that a
 * client retrying a revoked or mistyped one in a loop costs a map lookup instead of a SHA-256 and a query per
 * request. Caching a refusal is always safe: credentials are random 256-bit secrets, and revocation and expiry
 * are final, so a refused value never becomes valid. The TTL only lets the memory go; `max` bounds it (at most
 * 10,000 values of a fixed short shape, since values of any other shape are refused before they get here).
 */
export class RefusedCredentials {
  private readonly refused = new LRUCache<string, true>({
    max: REFUSED_MAX,
    ttl: REFUSED_TTL_MS,
    // No timer per entry (lru-cache's default resolution arms one): performance.now() is read per look-up.
    ttlResolution: 0,
  });

  has(credential: string): boolean {
    return this.refused.get(credential) === true;
  }

  add(credential: string): void {
    this.refused.set(credential, true);
  }
}
