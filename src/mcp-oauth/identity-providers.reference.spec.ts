import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { configurationReference } from '../config/configuration-reference.js';
import { identityProviderReference } from './identity-providers.reference.js';

describe("the configuration reference's identity-provider section", () => {
  it('lists every field of PUT /v1/mcp/identity-provider, with its description', () => {
    const section = identityProviderReference();
    for (const field of ['issuer', 'client_id', 'client_secret', 'scopes', 'owner_claim']) {
      expect(section).toMatch(new RegExp(`^\\| \`${field}\` \\| (yes|no) \\| \\S`, 'm'));
    }
    expect(section).toContain('| `scopes` | no |');
    expect(section).toContain('| `issuer` | yes |');
  });

  it('is docs/configuration.md as committed, with this section (run `npm run docs` after changing a field)', async () => {
    const file = 'docs/configuration.md';
    const generated = await prettier.format(configurationReference([identityProviderReference()]), {
      ...(await prettier.resolveConfig(file)),
      filepath: file,
    });
    expect(readFileSync(file, 'utf8')).toBe(generated);
  });
});
