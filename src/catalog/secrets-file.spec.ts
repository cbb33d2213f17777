import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSecretsFile } from './catalog.service.js';

describe('readSecretsFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'patchbay-secrets-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads .env lines: comments, quotes, export prefixes, multi-line double-quoted values', () => {
    const path = file(
      'a.env',
      '# client\nexport CLIENT_ID=demo\nCLIENT_SECRET="s3cret value"\nSINGLE=\'x=y\'\nEMPTY=\nPEM="line1\nline2"\n',
    );
    expect(readSecretsFile(path)).toEqual({
      CLIENT_ID: 'demo',
      CLIENT_SECRET: 's3cret value',
      SINGLE: 'x=y',
      EMPTY: '',
      PEM: 'line1\nline2',
    });
  });

  it('reads a JSON object of strings and refuses other values naming the key', () => {
    expect(readSecretsFile(file('a.json', '{"A": "1"}'))).toEqual({ A: '1' });
    expect(() => readSecretsFile(file('b.json', '{"A": 1}'))).toThrow('the value of A must be a string');
  });

  it('refuses a line that is not NAME=value, quoting it', () => {
    expect(() => readSecretsFile(file('bad.env', 'A=1\nnot a pair\nB=2\n'))).toThrow(
      'expected NAME=value lines, found "not a pair"',
    );
  });
});
