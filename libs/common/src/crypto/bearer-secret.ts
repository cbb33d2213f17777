import { createHash, randomBytes } from 'node:crypto';

/**
 * A new bearer secret (API key, MCP token, connect-link token, OAuth 2.0 state): 32 random bytes in
 * base64url after an optional prefix that tells which kind of credential it is.
 */
export function newBearerSecret(prefix = ''): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** 32 bytes in base64url without padding: 43 characters. */
const SECRET_BODY = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether a value could be a secret newBearerSecret(prefix) made: anything else is refused without
 * hashing it or asking the database (a 16 KiB header of garbage costs a regular expression, not a query).
 */
export function hasBearerSecretShape(value: string, prefix: string): boolean {
  return (
    value.length === prefix.length + 43 && value.startsWith(prefix) && SECRET_BODY.test(value.slice(prefix.length))
  );
}

/**
 * What is stored of a bearer secret and compared with: its SHA-256 in hex. The secrets have 256 bits
 * of entropy, so a fast unsalted hash is enough; a slow password hash would only cost every request.
 */
export function hashBearerSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}
