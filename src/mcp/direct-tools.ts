import { ProtocolError, ProtocolErrorCode, type Tool } from '@modelcontextprotocol/server';
import type { FunctionEntity, McpProtocolData } from '../functions/function.entity.js';
import { functionDefinition } from '../functions/function-definition.js';
import type { AnthropicFunctionDefinition } from '../functions/functions.dto.js';
import { toolName } from './tool-names.js';

/** Direct mode: each function a project can run is a tool of its own, listed page by page. */

/** Tools per page of a direct-mode tools/list. */
export const DIRECT_PAGE_SIZE = 100;

/**
 * A function as a direct-mode tool: annotations from its HTTP method, or — for a tool of a remote
 * MCP server — the hints its server gave.
 */
export function directTool(fn: FunctionEntity): Tool {
  const definition = functionDefinition(fn, 'anthropic') as AnthropicFunctionDefinition;
  const tool = {
    name: toolName(fn.name),
    title: fn.name,
    description: fn.description,
    inputSchema: definition.input_schema as Tool['inputSchema'],
  };
  if (fn.protocol === 'mcp') {
    const hints = (fn.protocol_data as McpProtocolData).annotations ?? {};
    return { ...tool, annotations: { title: fn.name, ...hints } };
  }
  const method =
    fn.protocol === 'rest' ? String((fn.protocol_data as { method?: string }).method ?? '').toUpperCase() : '';
  const annotations: NonNullable<Tool['annotations']> = { title: fn.name, openWorldHint: true };
  if (method === 'GET' || method === 'HEAD') {
    annotations.readOnlyHint = true;
  }
  if (method === 'DELETE') {
    annotations.destructiveHint = true;
  }
  if (['PUT', 'DELETE', 'GET', 'HEAD'].includes(method)) {
    annotations.idempotentHint = true;
  }
  return { ...tool, annotations };
}

export function encodeCursor(afterName: string): string {
  return Buffer.from(JSON.stringify({ after: afterName })).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string') {
      return parsed.after;
    }
  } catch {
    // Reported below, like any cursor this service did not give.
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
}
