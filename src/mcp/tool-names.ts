import { createHash } from 'node:crypto';

/**
 * Longest tool name Patchbay gives: desktop and IDE clients prefix `mcp__<server>__` and refuse
 * names past 64 characters in all; ACI's catalogue has function names of up to 63.
 */
export const TOOL_NAME_MAX = 48;
const HASH_LENGTH = 8;
const SAFE = /^[A-Za-z0-9_-]+$/;
const LOOKS_SHORTENED = new RegExp(`_[0-9a-f]{${HASH_LENGTH}}$`);

/**
 * The tool name of a function: the name itself when it fits and uses only the characters every
 * model provider accepts, else a prefix and 8 hex digits of its SHA-256. Deterministic (the same on
 * every instance and after restarts); a name of full length that already ends like a shortened one
 * is shortened too, so a kept name never equals a shortened one.
 */
export function toolName(functionName: string): string {
  const fits = functionName.length < TOOL_NAME_MAX || !LOOKS_SHORTENED.test(functionName);
  if (functionName.length <= TOOL_NAME_MAX && fits && SAFE.test(functionName)) {
    return functionName;
  }
  const hash = createHash('sha256').update(functionName).digest('hex').slice(0, HASH_LENGTH);
  const prefix = functionName.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, TOOL_NAME_MAX - HASH_LENGTH - 1);
  return `${prefix}_${hash}`;
}

/** Whether `name` is a function name given unchanged as a tool name. */
export function isUnchangedToolName(name: string): boolean {
  return toolName(name) === name;
}
