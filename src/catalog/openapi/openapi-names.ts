import { createHash } from 'node:crypto';

/**
 * Function names must pass OpenAI (`^[a-zA-Z0-9_-]{1,64}$`) and the desktop/IDE MCP clients that
 * prefix `mcp__<server>__` and refuse past 64 in all: the whole `APP__FUNCTION` stays within 48.
 */
export const MAX_FUNCTION_NAME = 48;
/** Leaves every function at least 24 characters after `APP__`. */
export const MAX_APP_NAME = 22;
const HASH_LENGTH = 6;

/**
 * A catalogue name (`^[A-Z0-9]+(_[A-Z0-9]+)*$`) from free text: camelCase split into words,
 * anything outside `[A-Za-z0-9]` a separator, upper-cased, separators collapsed.
 */
export function normaliseName(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toUpperCase();
}

export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH).toUpperCase();
}

/**
 * `name` within `max` characters, deterministically: first words lose their vowels (after the
 * first letter), then — still too long — the name is cut and ends with a short hash of `key`, so
 * two long names that share a beginning stay apart.
 */
export function fitName(name: string, max: number, key: string): string {
  if (name.length <= max) {
    return name;
  }
  const abbreviated = name
    .split('_')
    .map((word) => (word.length > 4 ? word[0] + word.slice(1).replace(/[AEIOU]/g, '') : word))
    .join('_');
  if (abbreviated.length <= max) {
    return abbreviated;
  }
  const head = abbreviated.slice(0, max - HASH_LENGTH - 1).replace(/_+$/, '');
  return `${head}_${shortHash(key)}`;
}

/** The app's name: `--app-name` or the title, normalised and within MAX_APP_NAME. */
export function appNameFrom(text: string): string {
  // Brand names stay one word ("GitHub" → GITHUB) and possessives go ("GitHub's" → GITHUB).
  const words = (
    text
      .replace(/['’]s\b/gi, '')
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .toUpperCase() || 'API'
  ).split('_');
  // Too long: whole words are dropped from the end, then the last one left is fitted.
  while (words.length > 1 && words.join('_').length > MAX_APP_NAME) {
    words.pop();
  }
  return fitName(words.join('_'), MAX_APP_NAME, text);
}

export interface OperationKey {
  method: string;
  path: string;
  operationId?: string;
}

/**
 * Unique function names for one app's operations, in the order given.
 *
 * Each is `APP__` + the operationId (else method and path) normalised and fitted to the 48-character
 * budget. `previous` maps `METHOD path` to the name an operation had in the catalogue: an operation
 * keeps its name while its method and path stay, even when its operationId changes. A clash is
 * settled by a short hash of method and path, so the outcome depends only on the operations themselves.
 */
export function functionNames(
  appName: string,
  operations: OperationKey[],
  previous: ReadonlyMap<string, string> = new Map(),
): string[] {
  const prefix = `${appName}__`;
  const budget = MAX_FUNCTION_NAME - prefix.length;
  const taken = new Set<string>();
  const names: (string | undefined)[] = operations.map((op) => {
    const kept = previous.get(operationKey(op));
    if (kept && kept.startsWith(prefix) && kept.length <= MAX_FUNCTION_NAME && !taken.has(kept)) {
      taken.add(kept);
      return kept;
    }
    return undefined;
  });
  const wanted = operations.map((op) => {
    const base = normaliseName(op.operationId ?? '') || normaliseName(`${op.method} ${op.path}`) || 'CALL';
    return fitName(base, budget, operationKey(op));
  });
  const counts = new Map<string, number>();
  wanted.forEach((name, i) => names[i] === undefined && counts.set(name, (counts.get(name) ?? 0) + 1));
  return operations.map((op, i) => {
    const kept = names[i];
    if (kept) {
      return kept;
    }
    let name = prefix + wanted[i];
    if ((counts.get(wanted[i]) ?? 0) > 1 || taken.has(name)) {
      const hash = shortHash(operationKey(op));
      name = `${prefix}${wanted[i].slice(0, budget - HASH_LENGTH - 1).replace(/_+$/, '')}_${hash}`;
    }
    taken.add(name);
    return name;
  });
}

export function operationKey(op: { method: string; path: string }): string {
  return `${op.method.toUpperCase()} ${op.path}`;
}
