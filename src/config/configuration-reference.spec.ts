import { readFileSync } from 'node:fs';
import { getMetadataStorage } from 'class-validator';
import prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { AppConfig, settings } from './app-config.js';
import { configurationReference } from './configuration-reference.js';

describe('the configuration reference', () => {
  it('opens docs/configuration.md as committed (run `npm run docs` after changing a setting)', async () => {
    // The sections after the environment's table (src/mcp-oauth/identity-providers.reference.spec.ts checks the page
    // with them) come from layers this one does not import.
    const file = 'docs/configuration.md';
    const generated = await prettier.format(configurationReference(), {
      ...(await prettier.resolveConfig(file)),
      filepath: file,
    });
    expect(readFileSync(file, 'utf8').startsWith(generated)).toBe(true);
  });

  it('describes every validated property of AppConfig, each once (loadConfig reads only those)', () => {
    const names = settings().map((setting) => setting.name);
    expect(new Set(names).size).toBe(names.length);
    const validated = getMetadataStorage()
      .getTargetValidationMetadatas(AppConfig, '', true, false)
      .map((metadata) => metadata.propertyName);
    expect(validated.length).toBeGreaterThan(40);
    expect(names.sort()).toEqual([...new Set(validated)].sort());
    for (const setting of settings()) {
      expect(setting.description, setting.name).not.toBe('');
    }
  });
});
