import { ProjectsService } from '../projects/projects.service.js';
import { parseDateTimeOption, parseDuration } from './arguments.js';
import { type CommandGroup, CommandError, out, outResult, withContext } from './command.js';
import { CLI_ACTOR } from '../audit/actor.js';

/** `patchbay api-keys …`. */
export const apiKeysCommands: CommandGroup = (program) => {
  const apiKeys = program.command('api-keys').description('Manage API keys');

  apiKeys
    .command('create')
    .summary('Create another API key for a project (shown once)')
    .description(
      'Create another API key for a project; it is shown once. An expired key is refused (401) like an unknown one.',
    )
    .requiredOption('--project <id>', 'project id')
    .option('--expires-in <duration>', 'the key stops working after this long (e.g. 30d, 12h, 90m)', parseDuration)
    .option('--expires-at <date-time>', 'the key stops working at this RFC 3339 date-time', parseDateTimeOption)
    .option('--json', 'print {"project_id", "api_key_id", "api_key", "expires_at"} as JSON')
    .action((options: { project: string; expiresIn?: number; expiresAt?: Date; json?: boolean }) =>
      withContext('patchbay api-keys create', true, async (ctx) => {
        if (options.expiresIn !== undefined && options.expiresAt !== undefined) {
          throw new CommandError('Give --expires-in or --expires-at, not both');
        }
        const expiresAt =
          options.expiresAt ?? (options.expiresIn !== undefined ? new Date(Date.now() + options.expiresIn) : null);
        const created = await ctx.get(ProjectsService).createApiKey(CLI_ACTOR, options.project, expiresAt);
        outResult(created, options.json, (key) => {
          out(`API key ${key.api_key_id} created for project ${key.project_id}.`);
          if (key.expires_at) {
            out(`It expires at ${key.expires_at}.`);
          }
          out(`API key (shown once, store it now): ${key.api_key}`);
        });
      }),
    );

  apiKeys
    .command('list')
    .summary("List a project's API keys (never the keys themselves)")
    .description(
      "List a project's API keys: id, created, expires, last used (recorded at most once a minute per key), " +
        'revoked. The keys themselves are never stored in clear, so never shown again.',
    )
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print the keys as a JSON array')
    .action((options: { project: string; json?: boolean }) =>
      withContext('patchbay api-keys list', true, async (ctx) => {
        const keys = await ctx.get(ProjectsService).listApiKeys(options.project);
        outResult(keys, options.json, (rows) => {
          out(['id', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'].join('\t'));
          for (const key of rows) {
            out(
              [key.id, key.created_at, key.expires_at ?? '-', key.last_used_at ?? '-', key.revoked_at ?? '-'].join(
                '\t',
              ),
            );
          }
        });
      }),
    );

  apiKeys
    .command('revoke')
    .summary('Revoke an API key by its id')
    .description(
      'Revoke an API key by its id: requests with it get 401 from then on (within API_KEY_CACHE_TTL_MS on the ' +
        'other running instances).',
    )
    .argument('<key_id>', 'API key id')
    .action((keyId: string) =>
      withContext('patchbay api-keys revoke', true, async (ctx) => {
        await ctx.get(ProjectsService).revokeApiKey(CLI_ACTOR, keyId);
        out(`API key ${keyId} revoked.`);
      }),
    );
};
