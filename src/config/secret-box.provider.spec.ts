import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../libs/common/src/index.js';
import { loadConfig } from './app-config.js';
import { secretBoxProvider } from './secret-box.provider.js';

const boxFor = (env: Record<string, string>) =>
  (secretBoxProvider as { useFactory: (config: unknown) => SecretBox }).useFactory(
    loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/x', ...env }),
  );

describe('the sealing key ring from the configuration', () => {
  const newKey = randomBytes(32);
  const oldKey = randomBytes(32);

  it('takes SECRETS_KEYS newest first, hex or base64, and seals with the first', () => {
    const box = boxFor({ SECRETS_KEYS: `${newKey.toString('hex')}, ${oldKey.toString('base64')}` });
    expect(box.keyIds).toEqual([SecretBox.keyId(newKey), SecretBox.keyId(oldKey)]);
    expect(new SecretBox(newKey).open(box.seal('x'))).toBe('x');
  });

  it('keeps SECRETS_KEY working as a ring of one', () => {
    expect(boxFor({ SECRETS_KEY: oldKey.toString('base64') }).keyIds).toEqual([SecretBox.keyId(oldKey)]);
  });

  it('refuses both settings together, a key that is not 32 bytes (by position, never its value), and a repeated key', () => {
    expect(() => boxFor({ SECRETS_KEYS: newKey.toString('hex'), SECRETS_KEY: oldKey.toString('hex') })).toThrow(
      'set SECRETS_KEYS or SECRETS_KEY, not both',
    );
    expect(() => boxFor({ SECRETS_KEYS: `${newKey.toString('hex')},not-a-key-at-all` })).toThrow(
      'SECRETS_KEYS: key 2 must be 32 bytes',
    );
    expect(() => boxFor({ SECRETS_KEYS: `${newKey.toString('hex')},${newKey.toString('base64')}` })).toThrow(
      'SECRETS_KEYS lists the same key twice',
    );
    expect(() => boxFor({})).toThrow('SECRETS_KEY (or SECRETS_KEYS) is required with DATABASE_URL');
  });
});
