import type { Command } from 'commander';
import type { McpServerAuth } from '../mcp-servers/mcp-server-app.js';
import { HTTP_HEADER_NAME } from '../mcp-servers/mcp-servers.dto.js';
import { McpServersService, type McpSyncReport } from '../mcp-servers/mcp-servers.service.js';
import { CommandError, out, outResult, withContext } from './command.js';

interface AddMcpOptions {
  appName?: string;
  displayName?: string;
  category: string[];
  auth?: string;
  token?: string;
  clientId?: string;
  clientSecret?: string;
  json?: boolean;
}

/** `patchbay catalog add-mcp` and `patchbay catalog sync`: remote MCP servers as apps. */
export function mcpServerCommands(catalog: Command): void {
  catalog
    .command('add-mcp')
    .description("Add a remote MCP server (Streamable HTTP) as an app: its tools become the app's functions")
    .argument('<url>', "the server's MCP endpoint, e.g. https://mcp.example.com/mcp")
    .option('--app-name <name>', "app name; default: from the server's name")
    .option('--display-name <name>', "display name; default: the server's title")
    .option(
      '--category <name>',
      'a category of the app (repeatable)',
      (value: string, all: string[]) => [...all, value],
      [],
    )
    .option(
      '--auth <scheme>',
      'how end users sign in: none, bearer, api-key:HEADER or oauth2 (the MCP authorization specification); ' +
        'default: none, bearer with --token, oauth2 when the server asks for it',
    )
    .option('--client-id <id>', 'with oauth2: the client Patchbay is registered as (default: dynamic registration)')
    .option('--client-secret <secret>', 'with oauth2 and --client-id: its secret (none for a public client)')
    .option('--token <credential>', 'a token or API key used only to read the tool list now (never stored)')
    .option('--json', 'print the report as one JSON object')
    .action((url: string, options: AddMcpOptions) =>
      withContext('patchbay catalog add-mcp', true, async (ctx) => {
        const report = await ctx.get(McpServersService).add(url, {
          appName: options.appName,
          displayName: options.displayName,
          categories: options.category,
          auth: options.auth === undefined ? undefined : parseAuth(options.auth, options),
          token: options.token,
        });
        outResult(report, options.json, printSyncReport);
      }),
    );

  catalog
    .command('sync')
    .description("Read a remote MCP server's tools again: new and changed ones written, vanished ones deactivated")
    .argument('<app>', 'the app added with add-mcp')
    .option('--token <credential>', 'a token or API key used only to read the tool list now (never stored)')
    .option('--json', 'print the report as one JSON object')
    .action((app: string, options: { token?: string; json?: boolean }) =>
      withContext('patchbay catalog sync', true, async (ctx) => {
        const report = await ctx.get(McpServersService).sync(app, { token: options.token });
        outResult(report, options.json, printSyncReport);
      }),
    );
}

function parseAuth(text: string, options: AddMcpOptions): McpServerAuth {
  if (text === 'oauth2') {
    return { scheme: 'oauth2', clientId: options.clientId, clientSecret: options.clientSecret };
  }
  if (options.clientId || options.clientSecret) {
    throw new CommandError('--client-id and --client-secret go with --auth oauth2');
  }
  if (text === 'none') {
    return { scheme: 'no_auth' };
  }
  if (text === 'bearer') {
    return { scheme: 'http_bearer' };
  }
  const header = text.startsWith('api-key:') ? text.slice('api-key:'.length) : undefined;
  if (header && HTTP_HEADER_NAME.test(header)) {
    return { scheme: 'api_key', header };
  }
  throw new CommandError(`--auth must be none, bearer, api-key:HEADER or oauth2, not ${JSON.stringify(text)}`);
}

function printSyncReport(report: McpSyncReport): void {
  const { functions } = report;
  out(
    `${report.app}: ${report.server.name} ${report.server.version} (protocol ${report.server.protocol_version ?? 'unknown'}) at ${report.url}`,
  );
  out(
    `Functions: ${functions.added.length} added, ${functions.updated.length} updated, ${functions.unchanged} unchanged, ${functions.deactivated.length} deactivated.`,
  );
  for (const skip of report.skipped) {
    out(`Skipped tool ${skip.tool}: ${skip.reason}`);
  }
}
