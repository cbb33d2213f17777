import { createHash, randomBytes } from 'node:crypto';

/**
 * A new bearer secret (API key, MCP token, connect-link token, OAuth 2.0 state): 32 random bytes in
 * base64url after an optional prefix that tells which kind of credential it is.
 */
export function newBearerSecret(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/**
 * What is stored of a bearer secret and compared with: its SHA-256 in hex. The secrets have 256 bits
 * of entropy, so a fast unsalted hash is enough; a slow password hash would only cost every request.
 */
export function hashBearerSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
