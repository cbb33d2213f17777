import type { ValidationIssue } from './validation.error.js';

/**
 * Bounds every request input must respect, whatever the route: checked once for path, query and body
 * before any DTO sees them, so that endpoints added later get the same protection.
 */
export interface InputLimits {
  /** Nesting levels of objects and arrays in a JSON body (the body itself is level 1). */
  maxDepth: number;
  /** Items of one JSON array. */
  maxArrayItems: number;
  /** Characters of one string (values and object keys). */
  maxStringLength: number;
  /** Values of one repeated query parameter (`?a=1&a=2…`). */
  maxQueryValues: number;
}

export const INPUT_LIMITS: InputLimits = {
  maxDepth: 32,
  maxArrayItems: 10_000,
  maxStringLength: 1_000_000,
  maxQueryValues: 100,
};

/** A report stops growing here: one hostile body must not cost a million issue objects. */
const MAX_ISSUES = 20;

type Location = 'path' | 'query' | 'body';
type Loc = (string | number)[];

/**
 * The violations of `limits` in one location's input, and U+0000 in any string or key: PostgreSQL
 * text cannot hold it, so it is refused here rather than failing deep in a query.
 */
export function inputIssues(location: Location, value: unknown, limits: InputLimits = INPUT_LIMITS): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (value === undefined || value === null) {
    return issues;
  }
  if (location === 'body') {
    walk(value, ['body'], 1, limits, issues);
    return issues;
  }
  // Path and query: a flat map of strings, or of string lists for repeated query keys.
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const loc = [location, key];
    checkString(key, loc, limits, issues);
    if (Array.isArray(item)) {
      if (item.length > limits.maxQueryValues) {
        issues.push(tooManyItems(loc, limits.maxQueryValues));
        continue;
      }
      item.forEach((entry, index) => checkString(entry, [...loc, index], limits, issues));
    } else {
      checkString(item, loc, limits, issues);
    }
  }
  return issues.slice(0, MAX_ISSUES);
}

/**
 * Walks a body depth first with one path (`loc`, pushed and popped as it goes), copied only into an issue: a path
 * per value was two arrays for every key of every body.
 */
function walk(value: unknown, loc: Loc, depth: number, limits: InputLimits, issues: ValidationIssue[]): void {
  if (issues.length >= MAX_ISSUES) {
    return;
  }
  if (typeof value === 'string') {
    checkString(value, loc, limits, issues);
    return;
  }
  if (value === null || typeof value !== 'object') {
    return;
  }
  if (depth > limits.maxDepth) {
    issues.push({
      loc: [...loc],
      msg: `JSON should be nested at most ${limits.maxDepth} levels deep`,
      type: 'too_deep',
    });
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > limits.maxArrayItems) {
      issues.push(tooManyItems([...loc], limits.maxArrayItems));
      return;
    }
    for (let index = 0; index < value.length; index += 1) {
      loc.push(index);
      walk(value[index], loc, depth + 1, limits, issues);
      loc.pop();
    }
    return;
  }
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    loc.push(key);
    checkString(key, loc, limits, issues);
    walk(object[key], loc, depth + 1, limits, issues);
    loc.pop();
  }
}

/** Reports a string over the length limit or holding U+0000, at a copy of `loc`. */
function checkString(value: unknown, loc: Loc, limits: InputLimits, issues: ValidationIssue[]): void {
  if (typeof value !== 'string' || issues.length >= MAX_ISSUES) {
    return;
  }
  if (value.length > limits.maxStringLength) {
    issues.push({
      loc: [...loc],
      msg: `String should have at most ${limits.maxStringLength} characters`,
      type: 'string_too_long',
    });
  } else if (value.includes('\u0000')) {
    issues.push({
      loc: [...loc],
      msg: 'String should not contain the NUL character (U+0000)',
      type: 'string_pattern_mismatch',
    });
  }
}

function tooManyItems(loc: Loc, max: number): ValidationIssue {
  return { loc, msg: `List should have at most ${max} items after validation`, type: 'too_long' };
}
