import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Logger, type Provider } from '@nestjs/common';
import { SecretBox } from '../../libs/common/src/index.js';
import { AppConfig, InvalidConfigError } from './app-config.js';

const KEY_FILE = 'secrets.key';

/**
 * The keys that seal credentials at rest: SECRETS_KEYS (a ring, newest first) or SECRETS_KEY (one key).
 * With a PostgreSQL server one of them must be configured; with the embedded database a key is
 * generated into DATA_DIR on first start (and that file must then be kept with the data: without it
 * the stored credentials cannot be read).
 */
export const secretBoxProvider: Provider = {
  provide: SecretBox,
  inject: [AppConfig],
  useFactory: (config: AppConfig) => new SecretBox(resolveKeys(config)),
};

function resolveKeys(config: AppConfig): Buffer[] {
  if (config.SECRETS_KEYS) {
    if (config.SECRETS_KEY) {
      throw new InvalidConfigError(['set SECRETS_KEYS or SECRETS_KEY, not both (SECRETS_KEYS holds every key)']);
    }
    const keys = config.SECRETS_KEYS.split(',').map((text, index) => {
      const key = SecretBox.parseKey(text);
      if (!key) {
        throw new InvalidConfigError([
          `SECRETS_KEYS: key ${index + 1} must be 32 bytes, given as 64 hex characters or base64`,
        ]);
      }
      return key;
    });
    const ids = keys.map((key) => SecretBox.keyId(key));
    if (new Set(ids).size !== ids.length) {
      throw new InvalidConfigError(['SECRETS_KEYS lists the same key twice']);
    }
    return keys;
  }
  return [resolveKey(config)];
}

function resolveKey(config: AppConfig): Buffer {
  if (config.SECRETS_KEY) {
    const key = SecretBox.parseKey(config.SECRETS_KEY);
    if (!key) {
      throw new InvalidConfigError(['SECRETS_KEY must be 32 bytes, given as 64 hex characters or base64']);
    }
    return key;
  }
  if (!config.embedded) {
    throw new InvalidConfigError([
      'SECRETS_KEY (or SECRETS_KEYS) is required with DATABASE_URL (32 bytes as 64 hex characters or base64; e.g. `openssl rand -base64 32`)',
    ]);
  }
  const dir = resolve(config.DATA_DIR);
  const path = join(dir, KEY_FILE);
  if (existsSync(path)) {
    return SecretBox.parseKey(readFileSync(path, 'utf8')) ?? corrupt(path);
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(path, `${SecretBox.generateKey()}\n`, { mode: 0o600 });
  new Logger('Secrets').warn(
    `SECRETS_KEY is not set: generated a new key into ${path}. Back it up with the data, or set SECRETS_KEY.`,
  );
  return SecretBox.parseKey(readFileSync(path, 'utf8')) ?? corrupt(path);
}

function corrupt(path: string): never {
  throw new InvalidConfigError([`the secrets key file ${path} is not a valid key; restore it or set SECRETS_KEY`]);
}
