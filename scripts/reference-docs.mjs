// `npm run docs`: writes the generated references, docs/configuration.md and docs/cli.md, from the
// compiled service (run after a build). src/config/configuration-reference.spec.ts and
// src/cli/cli-reference.spec.ts fail when the committed pages differ from what this writes.
import { writeFileSync } from 'node:fs';
import prettier from 'prettier';
import { cliReference } from '../dist/src/cli/cli-reference.js';
import { buildProgram } from '../dist/src/cli/cli.js';
import { configurationReference } from '../dist/src/config/configuration-reference.js';
import { identityProviderReference } from '../dist/src/mcp-oauth/identity-providers.reference.js';

const pages = {
  'docs/configuration.md': configurationReference([identityProviderReference()]),
  'docs/cli.md': cliReference(buildProgram()),
};
for (const [file, text] of Object.entries(pages)) {
  const options = { ...(await prettier.resolveConfig(file)), filepath: file };
  writeFileSync(file, await prettier.format(text, options));
  console.log(`wrote ${file}`);
}
