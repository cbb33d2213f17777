import { type CommandGroup, CommandError } from './command.js';

interface McpOptions {
  url: string;
  apiKey?: string;
  owner?: string;
  token?: string;
  mode?: string;
  apps?: string;
}

/** `patchbay mcp`. */
export const mcpCommands: CommandGroup = (program) => {
  program
    .command('mcp')
    .summary('Speak MCP on standard input/output for a local client, forwarding to a running Patchbay')
    .description(
      'MCP on standard input/output for local clients (desktop assistants): every message is forwarded to a ' +
        "running Patchbay's /v1/mcp over HTTP, so this never opens DATA_DIR. Diagnostics go to standard error only. " +
        '--mode and --apps work as in the /v1/mcp URL (docs/mcp.md).',
    )
    .requiredOption('--url <url>', 'base address of the running Patchbay (e.g. http://127.0.0.1:8000)')
    .option('--api-key <key>', 'project API key (with --owner)')
    .option('--owner <id>', 'linked-account owner to act for (with --api-key)')
    .option('--token <token>', 'owner-scoped MCP token (instead of --api-key and --owner)')
    .option('--mode <mode>', 'unified (default) or direct')
    .option('--apps <names>', 'only these apps, comma-separated')
    .action(async (options: McpOptions) => {
      if (!options.token && !options.apiKey) {
        throw new CommandError('patchbay mcp needs --token, or --api-key (with --owner to execute functions)');
      }
      if (options.mode !== undefined && options.mode !== 'unified' && options.mode !== 'direct') {
        throw new CommandError(`--mode must be unified or direct, not ${options.mode}`);
      }
      try {
        new URL(options.url);
      } catch {
        throw new CommandError(`--url is not a valid URL: ${options.url}`);
      }
      // Loaded here only: the bridge needs none of the service's modules.
      await (await import('./mcp-bridge.js')).runMcpBridge(options);
    });
};
