import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';

/** The form sealed before the key ring: `v1.<base64 iv|tag|ciphertext>`, no key named. */
function sealV1(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
}

describe('SecretBox key ring', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('seals with the newest key, naming it by a short hash that is not the key', () => {
    const box = new SecretBox([newKey, oldKey]);
    const sealed = box.seal('sk-live-1');
    const [version, id] = sealed.split('.');
    expect(version).toBe('v2');
    expect(id).toBe(SecretBox.keyId(newKey));
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(sealed).not.toContain(newKey.toString('base64'));
    expect(sealed).not.toContain(newKey.toString('hex').slice(0, 12));
    expect(box.open(sealed)).toBe('sk-live-1');
    expect(box.currentKeyId).toBe(id);
    expect(box.keyIds).toEqual([SecretBox.keyId(newKey), SecretBox.keyId(oldKey)]);
  });

  it('opens values sealed by an older key of the ring, and v1 values under any key of the ring', () => {
    const before = new SecretBox(oldKey).seal('under the old key');
    const legacy = sealV1(oldKey, 'legacy');
    const ring = new SecretBox([newKey, oldKey]);
    expect(ring.open(before)).toBe('under the old key');
    expect(ring.open(legacy)).toBe('legacy');
    expect(ring.isCurrent(before)).toBe(false);
    expect(ring.isCurrent(legacy)).toBe(false);
  });

  it('reseals what is not under the newest key and leaves the rest', () => {
    const ring = new SecretBox([newKey, oldKey]);
    const resealed = ring.reseal(new SecretBox(oldKey).sealJson({ api_key: 'k' }));
    expect(resealed).toBeDefined();
    expect(ring.isCurrent(resealed!)).toBe(true);
    expect(new SecretBox(newKey).openJson(resealed!)).toEqual({ api_key: 'k' });
    expect(ring.reseal(resealed!)).toBeUndefined();
    expect(ring.reseal(sealV1(newKey, 'v1 under the newest key'))).toMatch(/^v2\./);
  });

  it('refuses values sealed by a key the ring no longer holds, without naming the key', () => {
    const ring = new SecretBox(newKey);
    const sealed = new SecretBox(oldKey).seal('gone');
    expect(() => ring.open(sealed)).toThrow(`Sealed with key ${SecretBox.keyId(oldKey)}, which is not in the key ring`);
    expect(() => ring.open(sealV1(oldKey, 'gone'))).toThrow('not in the key ring');
    expect(() => ring.open('v3.x.y')).toThrow('Unrecognised sealed secret');
  });
});
