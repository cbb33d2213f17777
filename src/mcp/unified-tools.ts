import type { Tool } from '@modelcontextprotocol/server';
import { McpToolArgumentError } from './mcp.errors.js';

/** Unified mode's three tools, the same for every caller, and how their arguments are read. */

/** Results of one search_functions call, at most. */
const SEARCH_MAX = 20;
const SEARCH_DEFAULT = 10;

export const SEARCH_TOOL = 'search_functions';
export const DEFINITION_TOOL = 'get_function_definition';
export const EXECUTE_TOOL = 'execute_function';

export const UNIFIED_TOOLS: Tool[] = [
  {
    name: SEARCH_TOOL,
    title: 'Search functions',
    description:
      'Find functions (API operations of apps such as GitHub, Gmail or Slack) that can do what you need. Use it ' +
      'first, whenever you need to act on an outside service. Describe the task in `intent` ("create an issue in a ' +
      'GitHub repository"). Returns at most 20 functions, best first, each with its name, app, description, ' +
      '`input_schema` (the JSON Schema of its input) and `linked_account` (whether the user has connected that ' +
      'app). Then call execute_function with the name and an input that follows input_schema.',
    inputSchema: {
      type: 'object',
      properties: {
        intent: { type: 'string', description: 'What you want to do, in plain words' },
        app_names: {
          type: 'array',
          items: { type: 'string' },
          description: 'Only functions of these apps (for example ["GITHUB"]); leave out to search every app',
        },
        include_unavailable: {
          type: 'boolean',
          description: 'Also return functions this project has not enabled (they cannot be executed); false by default',
        },
        limit: { type: 'integer', minimum: 1, maximum: SEARCH_MAX, description: 'How many results (default 10)' },
      },
      required: ['intent'],
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: DEFINITION_TOOL,
    title: 'Get a function definition',
    description:
      'The description and input JSON Schema of one function, by its exact name (as search_functions returned ' +
      'it). Use it when you know the function name but not its input.',
    inputSchema: {
      type: 'object',
      properties: { function_name: { type: 'string', description: 'Exact function name, e.g. GITHUB__CREATE_ISSUE' } },
      required: ['function_name'],
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  },
  {
    name: EXECUTE_TOOL,
    title: 'Execute a function',
    description:
      'Run one function for the user and get its result: {"success": true, "data": ...} with what the ' +
      "service answered. `function_input` must follow the function's input_schema from search_functions or " +
      'get_function_definition. On failure the result is an error saying what went wrong (for example a missing ' +
      'field, or an account the user must connect first, with the address to do so).',
    inputSchema: {
      type: 'object',
      properties: {
        function_name: { type: 'string', description: 'Exact function name, e.g. GITHUB__CREATE_ISSUE' },
        function_input: { type: 'object', description: "The function's input, as its input_schema describes" },
      },
      required: ['function_name'],
    },
    annotations: { openWorldHint: true },
  },
];
export const UNIFIED_TOOL_NAMES = new Set([SEARCH_TOOL, DEFINITION_TOOL, EXECUTE_TOOL]);

export function stringArgument(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new McpToolArgumentError(`${name} is required and must be a non-empty string`);
  }
  return value;
}

function optionalStringArray(args: Record<string, unknown>, name: string): string[] | null {
  const value = args[name];
  if (value === undefined || value === null) {
    return null;
  }
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw new McpToolArgumentError(`${name} must be an array of strings`);
  }
  return value;
}

/** The arguments of a search_functions call, checked; `limit` is brought within 1 to 20. */
export function searchArguments(args: Record<string, unknown>): {
  intent: string;
  appNames: string[] | null;
  includeUnavailable: boolean;
  limit: number;
} {
  return {
    intent: stringArgument(args, 'intent'),
    appNames: optionalStringArray(args, 'app_names'),
    includeUnavailable: args.include_unavailable === true,
    limit: typeof args.limit === 'number' ? Math.min(Math.max(Math.trunc(args.limit), 1), SEARCH_MAX) : SEARCH_DEFAULT,
  };
}
