import { IdentityProviderSet } from './identity-providers.dto.js';

/** Where @nestjs/swagger keeps a DTO's properties (its `DECORATORS.API_MODEL_PROPERTIES*`). */
const PROPERTIES_ARRAY = 'swagger/apiModelPropertiesArray';
const PROPERTIES = 'swagger/apiModelProperties';

/** Markdown table cells: a pipe would end the cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/**
 * The section of docs/configuration.md on a project's identity provider (the settings of PUT
 * /v1/mcp/identity-provider), generated from the request's own field descriptions.
 */
export function identityProviderReference(): string {
  const names = (Reflect.getMetadata(PROPERTIES_ARRAY, IdentityProviderSet.prototype) as string[]).map((name) =>
    name.replace(/^:/, ''),
  );
  const rows = names.map((name) => {
    const property = Reflect.getMetadata(PROPERTIES, IdentityProviderSet.prototype, name) as {
      description?: string;
      required?: boolean;
    };
    return `| \`${name}\` | ${property.required === false ? 'no' : 'yes'} | ${cell(property.description ?? '')} |`;
  });
  return [
    '## Per project: the identity provider of its MCP address',
    '',
    "MCP clients that sign in by OAuth (Claude, ChatGPT, VS Code, Cursor…) sign the user in through the project's own",
    'OpenID Connect provider. It is a setting of the project, made with `PUT /v1/mcp/identity-provider` (its API key),',
    'not of the environment; step by step in [Add Patchbay to Claude, ChatGPT, VS Code or Cursor](mcp-clients.md). The',
    "environment's `PUBLIC_BASE_URL` must be the address browsers and MCP clients reach, and `MCP_CLIENT_METADATA_*`",
    'above bound the fetch of client metadata documents.',
    '',
    '| Field | Required | Meaning |',
    '| --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
