import $RefParser from '@apidevtools/json-schema-ref-parser';
import { type CatalogProblem, checkFunctionRecord, type FunctionFile } from '../catalog/catalog-files.js';
import {
  fitName,
  MAX_FUNCTION_NAME,
  normaliseName,
  operationKey,
  shortHash,
} from '../catalog/openapi/openapi-names.js';
import { cleanText, isNode, toCatalogSchema } from '../catalog/openapi/openapi-schema.js';
import type { McpProtocolData, McpToolHints } from '../functions/function.entity.js';

/** A tool's input schema larger than this (as JSON) is refused for that tool. */
export const MAX_TOOL_SCHEMA_BYTES = 256 * 1024;
/** Longest description kept: tool descriptions are data, never instructions, and agents read them in full. */
export const MAX_TOOL_DESCRIPTION_CHARS = 2000;
const MAX_TOOL_NAME_CHARS = 256;
type Node = Record<string, unknown>;
const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

export interface SkippedTool {
  tool: string;
  reason: string;
}

/** A tool as the catalogue stores it: the function file, and the tool's own name. */
export interface MappedTool {
  tool: string;
  fn: FunctionFile;
}

/** The catalogue key of a tool, beside REST's `METHOD path`: a tool keeps its function name while its name stays. */
export function toolKey(tool: string): string {
  return operationKey({ method: 'TOOL', path: tool });
}

/**
 * The tools of one page as function files of the app, each checked by the catalogue's own rules; a
 * tool that fails them is skipped with its reason, never the whole server; names come from `nameOf`
 * (a ToolNamer).
 */
export async function mapTools(
  appName: string,
  serverUrl: string,
  tools: unknown[],
  nameOf: (tool: string) => string,
): Promise<{ mapped: MappedTool[]; skipped: SkippedTool[] }> {
  const mapped: MappedTool[] = [];
  const skipped: SkippedTool[] = [];
  for (const entry of tools) {
    const tool: Node = isNode(entry) ? entry : {};
    const toolName = typeof tool.name === 'string' ? tool.name : '';
    if (toolName.length === 0 || toolName.length > MAX_TOOL_NAME_CHARS) {
      skipped.push({ tool: stripControl(toolName).slice(0, 80), reason: 'the tool has no usable name' });
      continue;
    }
    const parameters = await parameterSchema(tool.inputSchema);
    if (typeof parameters === 'string') {
      skipped.push({ tool: toolName, reason: parameters });
      continue;
    }
    const annotations = toolHints(tool);
    const protocolData: McpProtocolData = { server_url: serverUrl, tool: toolName };
    if (annotations) {
      protocolData.annotations = annotations;
    }
    const fn: FunctionFile = {
      name: nameOf(toolName),
      description: toolDescription(tool, toolName),
      tags: [],
      visibility: 'public',
      active: true,
      protocol: 'mcp',
      protocol_data: protocolData as unknown as Record<string, unknown>,
      parameters,
    };
    const problems: CatalogProblem[] = checkFunctionRecord(appName, fn, toolName, 0);
    if (problems.length > 0) {
      skipped.push({ tool: toolName, reason: problems.map((p) => `${p.path} ${p.reason}`).join('; ') });
      continue;
    }
    mapped.push({ tool: toolName, fn });
  }
  return { mapped, skipped };
}

/**
 * Function names for the tools of one server, given in listing order: a name the app's function
 * already has for the tool (`previous`, `TOOL name` → function name) is kept; a new one is the tool's
 * name normalised and fitted as an OpenAPI operation's is (≤ 48 characters in all), and one that
 * would repeat a name already given ends with a short hash of the tool's name instead.
 */
export class ToolNamer {
  private readonly prefix: string;
  private readonly taken = new Set<string>();

  constructor(
    appName: string,
    private readonly previous: ReadonlyMap<string, string>,
  ) {
    this.prefix = `${appName}__`;
    for (const name of previous.values()) {
      this.taken.add(name);
    }
  }

  nameOf(tool: string): string {
    const kept = this.previous.get(toolKey(tool));
    if (kept) {
      return kept;
    }
    const budget = MAX_FUNCTION_NAME - this.prefix.length;
    const wanted = fitName(normaliseName(tool) || 'TOOL', budget, toolKey(tool));
    let name = this.prefix + wanted;
    if (this.taken.has(name)) {
      const hash = shortHash(toolKey(tool));
      name = `${this.prefix}${wanted.slice(0, budget - hash.length - 1).replace(/_+$/, '')}_${hash}`;
    }
    this.taken.add(name);
    return name;
  }
}

/** The catalogue parameter schema of a tool's input schema, or why there is none. */
async function parameterSchema(inputSchema: unknown): Promise<Record<string, unknown> | string> {
  if (!isNode(inputSchema)) {
    return 'its inputSchema is not a JSON object';
  }
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(inputSchema));
  } catch {
    return 'its inputSchema cannot be read as JSON';
  }
  if (size > MAX_TOOL_SCHEMA_BYTES) {
    return `its inputSchema is ${size} bytes, over the limit of ${MAX_TOOL_SCHEMA_BYTES}`;
  }
  if (inputSchema.type !== undefined && inputSchema.type !== 'object') {
    return 'its inputSchema must describe an object';
  }
  let resolved: unknown;
  try {
    // Local references only ($defs, definitions): a tool schema never makes Patchbay fetch anything.
    resolved = await $RefParser.dereference(structuredClone(inputSchema), {
      resolve: { external: false },
      dereference: { circular: true },
    });
  } catch (error) {
    return `its inputSchema has a reference that cannot be resolved: ${(error as Error).message.slice(0, 200)}`;
  }
  const converted = toCatalogSchema({ ...(resolved as Record<string, unknown>), type: 'object' });
  // Every object node of the catalogue has these four keys (catalog-files.ts checks them).
  return {
    type: 'object',
    properties: {},
    required: [],
    visible: Object.keys((converted.properties as Record<string, unknown> | undefined) ?? {}),
    additionalProperties: false,
    ...converted,
  };
}

function toolDescription(tool: Node, toolName: string): string {
  const text = stripControl(cleanText(tool.description ?? tool.title ?? '', MAX_TOOL_DESCRIPTION_CHARS));
  return text || `The ${stripControl(toolName)} tool`;
}

function toolHints(tool: Node): McpToolHints | undefined {
  const given = isNode(tool.annotations) ? tool.annotations : {};
  const hints: McpToolHints = {};
  const title = typeof given.title === 'string' ? given.title : typeof tool.title === 'string' ? tool.title : undefined;
  if (title) {
    hints.title = stripControl(title).slice(0, 200);
  }
  for (const hint of HINTS) {
    if (typeof given[hint] === 'boolean') {
      hints[hint] = given[hint];
    }
  }
  return Object.keys(hints).length > 0 ? hints : undefined;
}

/** Text from a server is data: control characters (other than none) go. */
export function stripControl(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g, ' ').trim();
}
