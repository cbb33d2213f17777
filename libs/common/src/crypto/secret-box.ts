import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Authenticated encryption (AES-256-GCM) of small secrets stored in the database, under a key ring
 * (newest key first). The sealed form is `v2.<key id>.<base64 iv|tag|ciphertext>`: the key id (a short
 * hash of the key, never the key) says which key of the ring opens it. Values sealed before the ring
 * (`v1.<payload>`) name no key; every key of the ring is tried on them.
 */
export class SecretBox {
  private readonly keys: { id: string; key: Buffer }[];

  /** `keys`: the ring, newest first; new secrets are sealed with the first. */
  constructor(keys: Buffer | Buffer[]) {
    const ring = Array.isArray(keys) ? keys : [keys];
    if (ring.length === 0) {
      throw new Error('SecretBox needs at least one key');
    }
    this.keys = ring.map((key) => {
      if (key.length !== 32) {
        throw new Error('SecretBox needs 32-byte keys');
      }
      return { id: SecretBox.keyId(key), key: Buffer.from(key) };
    });
  }

  /** Accepts 64 hex characters or base64 of 32 bytes. */
  static parseKey(text: string): Buffer | undefined {
    const trimmed = text.trim();
    if (/^[0-9a-fA-F]{64}$/.test(trimmed)) {
      return Buffer.from(trimmed, 'hex');
    }
    const decoded = Buffer.from(trimmed, 'base64');
    return decoded.length === 32 ? decoded : undefined;
  }

  static generateKey(): string {
    return randomBytes(32).toString('base64');
  }

  /** 12 hex characters of a labelled SHA-256 of the key: names a key in sealed values and reports. */
  static keyId(key: Buffer): string {
    return createHash('sha256').update('patchbay secret-box key id\0').update(key).digest('hex').slice(0, 12);
  }

  /** The id of the key new secrets are sealed with. */
  get currentKeyId(): string {
    return this.keys[0].id;
  }

  /** The ids of the ring, newest first. */
  get keyIds(): string[] {
    return this.keys.map((entry) => entry.id);
  }

  seal(plaintext: string): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v2.${id}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
  }

  open(sealed: string): string {
    const parts = sealed.split('.');
    if (parts[0] === 'v2' && parts.length === 3 && parts[2]) {
      const entry = this.keys.find((candidate) => candidate.id === parts[1]);
      if (!entry) {
        throw new Error(`Sealed with key ${parts[1]}, which is not in the key ring`);
      }
      return decrypt(entry.key, parts[2]);
    }
    if (parts[0] === 'v1' && parts.length === 2 && parts[1]) {
      // No key named: the authentication tag tells the key that sealed it.
      for (const { key } of this.keys) {
        try {
          return decrypt(key, parts[1]);
        } catch {
          continue;
        }
      }
      throw new Error('Sealed with a key that is not in the key ring');
    }
    throw new Error('Unrecognised sealed secret');
  }

  /** Whether `sealed` is already under the newest key (what a rotation skips). */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`v2.${this.keys[0].id}.`);
  }

  /** `sealed` re-sealed under the newest key, or undefined when it already is. */
  reseal(sealed: string): string | undefined {
    return this.isCurrent(sealed) ? undefined : this.seal(this.open(sealed));
  }

  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value));
  }

  openJson<T>(sealed: string): T {
    return JSON.parse(this.open(sealed)) as T;
  }
}

function decrypt(key: Buffer, payload: string): string {
  const raw = Buffer.from(payload, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
}
