import type { Actor } from '../audit/actor.js';

export type McpMode = 'unified' | 'direct';
/** `legacy`: protocol 2025-11-25 and before (initialize, sessions); `modern`: 2026-07-28 (per-request). */
export type McpEra = 'legacy' | 'modern';

/** The key of the URL elicitation in an input-required result, and of its answer in the retried call. */
export const LINK_INPUT_KEY = 'link_account';

/** Everything a tools/list or tools/call needs to know about its caller; built per request. */
export interface McpCallContext {
  projectId: string;
  /** The end user; null when an API-key caller named none (search and definitions still work). */
  ownerId: string | null;
  tokenId: string | null;
  /** Who the audit log says made a change (a connect link asked for): the MCP token, or the API key. */
  actor: Actor;
  mode: McpMode;
  /** The apps the caller may reach (URL `apps` and the token's apps, intersected); null for all. */
  apps: string[] | null;
  era: McpEra;
  /**
   * Whether the client can show a URL elicitation: declared in its `initialize` (legacy, known only
   * within a session) or in the request's own capabilities (modern).
   */
  urlElicitation: boolean;
  /** Modern: the retried call carries the client's answer to an earlier link request. */
  linkAnswered: boolean;
}

/** Both limits at once; null means "no limit". */
export function intersect(a: string[] | null, b: string[] | null): string[] | null {
  if (a === null) {
    return b;
  }
  if (b === null) {
    return a;
  }
  return a.filter((item) => b.includes(item));
}
