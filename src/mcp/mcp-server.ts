import { type CacheHint, Server } from '@modelcontextprotocol/server';
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { API_VERSION } from '../config/api-version.js';
import type { McpCallContext, McpMode } from './mcp-call-context.js';
import type { McpToolsService } from './mcp-tools.service.js';

const INSTRUCTIONS =
  'Patchbay gives you functions of outside apps (GitHub, Gmail, Slack…) that act for the current user. ' +
  'Find one with search_functions, then run it with execute_function. If a call says an account must be ' +
  'connected, give the user the address it names and retry once they say it is done.';

/**
 * How long a 2026-07-28 client may reuse a tools/list page: unified mode's three tools are the same
 * for every caller and never change; a direct-mode list follows the project's configurations (a
 * `subscriptions/listen` stream tells when it changed), so it is private and short-lived.
 */
const LIST_CACHE: Record<McpMode, CacheHint> = {
  unified: { ttlMs: 24 * 3600 * 1000, cacheScope: 'public' },
  direct: { ttlMs: 60_000, cacheScope: 'private' },
};

/** The one server definition both eras use (the SDK projects results onto each era's wire). */
export function patchbayServer(ctx: McpCallContext, tools: McpToolsService, validator: AjvJsonSchemaValidator): Server {
  const server = new Server(
    { name: 'patchbay', title: 'Patchbay', version: API_VERSION },
    {
      // listChanged: GET streams (2025-11-25) and subscriptions/listen (2026-07-28),
      // see McpTransportService.toolsChanged.
      capabilities: { tools: { listChanged: true } },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: validator,
      cacheHints: { 'tools/list': LIST_CACHE[ctx.mode] },
    },
  );
  server.setRequestHandler('tools/list', (message) => tools.listTools(ctx, message.params?.cursor));
  server.setRequestHandler('tools/call', async (message) => {
    const result = await tools.callTool(ctx, message.params.name, message.params.arguments ?? {});
    return 'resultType' in result ? result : server.projectCallToolResult(result, undefined);
  });
  return server;
}
