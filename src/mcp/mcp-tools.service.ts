import { Injectable } from '@nestjs/common';
import {
  type CallToolResult,
  type InputRequiredResult,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  type Tool,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/server';
import { DomainError } from '../../libs/common/src/index.js';
import { AppConfig } from '../config/app-config.js';
import { ExecutionCache } from '../execution/execution-cache.js';
import { LinkedAccountOfOwnerNotFoundError, LinkedAccountSchemeMismatchError } from '../execution/execution.errors.js';
import { ExecutionService } from '../execution/execution.service.js';
import { functionDefinition } from '../functions/function-definition.js';
import type { AnthropicFunctionDefinition, FunctionBasic } from '../functions/functions.dto.js';
import { FunctionNotFoundError } from '../functions/functions.errors.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { FunctionsService } from '../functions/functions.service.js';
import { LinkedAccountsService } from '../linked-accounts/linked-accounts.service.js';
import { AccountLinking } from './account-linking.js';
import { DIRECT_PAGE_SIZE, decodeCursor, directTool, encodeCursor } from './direct-tools.js';
import { intersect, LINK_INPUT_KEY, type McpCallContext } from './mcp-call-context.js';
import { McpToolArgumentError } from './mcp.errors.js';
import { isUnchangedToolName, toolName } from './tool-names.js';
import {
  DEFINITION_TOOL,
  SEARCH_TOOL,
  searchArguments,
  stringArgument,
  UNIFIED_TOOL_NAMES,
  UNIFIED_TOOLS,
} from './unified-tools.js';

export type McpToolResult = CallToolResult | InputRequiredResult;

/**
 * The tools Patchbay offers over MCP, on the same services as the REST API: search and definitions
 * through FunctionsService, runs through ExecutionService (same checks, same errors, same log).
 */
@Injectable()
export class McpToolsService {
  constructor(
    private readonly functions: FunctionsService,
    private readonly functionRows: FunctionsRepository,
    private readonly execution: ExecutionService,
    private readonly executionCache: ExecutionCache,
    private readonly accounts: LinkedAccountsService,
    private readonly linking: AccountLinking,
    private readonly config: AppConfig,
  ) {}

  async listTools(ctx: McpCallContext, cursor: string | undefined): Promise<{ tools: Tool[]; nextCursor?: string }> {
    if (ctx.mode === 'unified') {
      return { tools: UNIFIED_TOOLS };
    }
    const afterName = cursor === undefined ? undefined : decodeCursor(cursor);
    if (ctx.apps?.length === 0) {
      return { tools: [] };
    }
    const rows = await this.functionRows.findRunnable(ctx.projectId, {
      appNames: ctx.apps ?? undefined,
      afterName,
      limit: DIRECT_PAGE_SIZE + 1,
    });
    const page = rows.slice(0, DIRECT_PAGE_SIZE);
    const tools = page.map(directTool);
    return rows.length > DIRECT_PAGE_SIZE ? { tools, nextCursor: encodeCursor(page[page.length - 1].name) } : { tools };
  }

  async callTool(ctx: McpCallContext, name: string, args: Record<string, unknown>): Promise<McpToolResult> {
    if (ctx.mode === 'direct') {
      const functionName = await this.directFunction(ctx, name);
      const result = await this.execute(ctx, functionName, args);
      if (
        !('resultType' in result) &&
        result.isError &&
        text(result) === new FunctionNotFoundError(functionName).message
      ) {
        // In direct mode a function name is a tool name: one that does not exist is a protocol error.
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      return result;
    }
    if (!UNIFIED_TOOL_NAMES.has(name)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    try {
      return await this.callUnified(ctx, name, args);
    } catch (error) {
      // Arguments that do not fit the tool's schema: a tool error the model can correct (SEP-1303).
      if (error instanceof McpToolArgumentError) {
        return errorResult(error.message);
      }
      throw error;
    }
  }

  private callUnified(ctx: McpCallContext, name: string, args: Record<string, unknown>): Promise<McpToolResult> {
    if (name === SEARCH_TOOL) {
      return this.search(ctx, args);
    }
    if (name === DEFINITION_TOOL) {
      return this.definition(ctx, stringArgument(args, 'function_name'));
    }
    const input = args.function_input ?? {};
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new McpToolArgumentError('function_input must be an object');
    }
    return this.execute(ctx, stringArgument(args, 'function_name'), input as Record<string, unknown>);
  }

  private async search(ctx: McpCallContext, args: Record<string, unknown>): Promise<CallToolResult> {
    const { intent, appNames, includeUnavailable, limit } = searchArguments(args);
    const apps = intersect(appNames, ctx.apps);
    if (apps?.length === 0) {
      return this.success({ results: [] });
    }
    const hits = await this.functions.searchFunctions(ctx.projectId, {
      intent,
      app_names: apps ?? undefined,
      configured_only: !includeUnavailable,
      allowed_apps_only: false,
      allowed_only: false,
      limit,
      offset: 0,
      format: 'basic',
    });
    // Basic results are {name, description}; the rows give the app and the schema.
    const names = hits.map((hit) => (hit as FunctionBasic).name);
    const rows = await this.functionRows.findVisible({ projectId: ctx.projectId, functionNames: names });
    const byName = new Map(rows.map((row) => [row.name, row]));
    const linkedApps = await this.linkedApps(ctx);
    const results = names.flatMap((name) => {
      const row = byName.get(name);
      if (!row) {
        return [];
      }
      const definition = functionDefinition(row, 'anthropic') as AnthropicFunctionDefinition;
      return [
        {
          name: row.name,
          app_name: row.app_name,
          description: row.description,
          input_schema: definition.input_schema,
          linked_account: linkedApps === null ? null : linkedApps.has(row.app_name),
        },
      ];
    });
    return this.success({ results });
  }

  private async definition(ctx: McpCallContext, name: string): Promise<CallToolResult> {
    try {
      const definition = (await this.functions.getFunctionDefinition(ctx.projectId, name, {
        format: 'anthropic',
      })) as AnthropicFunctionDefinition;
      if (ctx.apps !== null && !(await this.allowedFunction(ctx, name))) {
        throw new FunctionNotFoundError(name);
      }
      return this.success({ ...definition });
    } catch (error) {
      return this.failure(error);
    }
  }

  private async execute(
    ctx: McpCallContext,
    functionName: string,
    input: Record<string, unknown>,
  ): Promise<McpToolResult> {
    if (ctx.ownerId === null) {
      return errorResult(
        'No linked-account owner: add the X-Linked-Account-Owner-Id header (or linked_account_owner_id in the ' +
          'query of the MCP URL) naming the end user to act for, or use an owner-scoped MCP token.',
      );
    }
    try {
      if (ctx.apps !== null && !(await this.allowedFunction(ctx, functionName))) {
        throw new FunctionNotFoundError(functionName);
      }
      const result = await this.execution.executeFunction(
        ctx.projectId,
        functionName,
        { linked_account_owner_id: ctx.ownerId, function_input: input },
        { source: 'mcp', mcpTokenId: ctx.tokenId },
      );
      if (!result.success) {
        return errorResult(result.error ?? 'The function failed');
      }
      return this.success({ success: true, data: result.data });
    } catch (error) {
      if (error instanceof LinkedAccountOfOwnerNotFoundError || error instanceof LinkedAccountSchemeMismatchError) {
        return this.linkNeeded(ctx, ctx.ownerId, functionName, error);
      }
      return this.failure(error);
    }
  }

  /**
   * The owner must (re)link the app's account. Protocol 2026-07-28: an input-required result whose
   * URL elicitation carries the link, when the request declared URL elicitation and has not already
   * answered one (then the client retries the call once the user is done). 2025-11-25: the
   * URL-elicitation-required error when the session declared URL elicitation. Otherwise, and after
   * an answered round that still finds no account, the link in the tool error.
   */
  private async linkNeeded(
    ctx: McpCallContext,
    ownerId: string,
    functionName: string,
    error: DomainError,
  ): Promise<McpToolResult> {
    const fn = await this.executionCache.function(functionName, ctx.projectId);
    if (!fn) {
      return this.failure(error);
    }
    const link = await this.linking.linkFor(ctx.projectId, ctx.actor, fn.fn.app_name, ownerId);
    if (ctx.urlElicitation && ctx.era === 'modern' && !ctx.linkAnswered) {
      return inputRequired({
        inputRequests: { [LINK_INPUT_KEY]: inputRequired.elicitUrl({ message: link.message, url: link.url }) },
      });
    }
    if (ctx.urlElicitation && ctx.era === 'legacy') {
      throw new UrlElicitationRequiredError(
        [{ mode: 'url', message: link.message, url: link.url, elicitationId: crypto.randomUUID() }],
        `${error.message}. The user must connect ${fn.fn.app_name} first; retry once they have.`,
      );
    }
    return errorResult(`${error.message}. ${link.message}`);
  }

  /** The function a direct-mode tool name stands for; a name no enabled function has is a protocol error. */
  private async directFunction(ctx: McpCallContext, name: string): Promise<string> {
    if (isUnchangedToolName(name)) {
      return name;
    }
    // A shortened name: find it among the functions this caller can list (names never change their tool name).
    let afterName: string | undefined;
    for (;;) {
      const rows = await this.functionRows.findRunnable(ctx.projectId, {
        appNames: ctx.apps ?? undefined,
        afterName,
        limit: 1000,
      });
      const found = rows.find((row) => toolName(row.name) === name);
      if (found) {
        return found.name;
      }
      if (rows.length < 1000) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      afterName = rows[rows.length - 1].name;
    }
  }

  private async allowedFunction(ctx: McpCallContext, functionName: string): Promise<boolean> {
    const fn = await this.executionCache.function(functionName, ctx.projectId);
    return fn !== null && (ctx.apps === null || ctx.apps.includes(fn.fn.app_name));
  }

  /** Apps the owner has an enabled linked account of; null when no owner is known. */
  private async linkedApps(ctx: McpCallContext): Promise<Set<string> | null> {
    if (ctx.ownerId === null) {
      return null;
    }
    const accounts = await this.accounts.listLinkedAccounts(ctx.projectId, { linked_account_owner_id: ctx.ownerId });
    return new Set(accounts.filter((account) => account.enabled).map((account) => account.app_name));
  }

  private success(payload: Record<string, unknown>): CallToolResult {
    const text = JSON.stringify(payload);
    const size = Buffer.byteLength(text);
    const max = this.config.MCP_RESULT_MAX_BYTES;
    if (size <= max) {
      return { content: [{ type: 'text', text }], structuredContent: payload };
    }
    const shown = Buffer.from(text).subarray(0, max).toString('utf8');
    return {
      content: [
        {
          type: 'text',
          text: `${shown}\n[truncated: the result is ${size} bytes; only the first ${max} are shown]`,
        },
      ],
      structuredContent: { success: true, truncated: true, total_bytes: size, shown_bytes: max },
    };
  }

  /** A pipeline check that failed: the message the REST API gives; anything else is not ours to explain. */
  private failure(error: unknown): CallToolResult {
    if (error instanceof DomainError) {
      return errorResult(error.message);
    }
    throw error;
  }
}

function text(result: CallToolResult): string | undefined {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : undefined;
}

function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}
