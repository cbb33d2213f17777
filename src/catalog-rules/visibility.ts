/**
 * The visibility rule, in one place: an app or function is offered (listed, searched, defined, run)
 * when it is public and active; a function also needs its app to be visible.
 */
export const VISIBLE = { visibility: 'public', active: true } as const;

/** The rule as a SQL condition on the row aliased `alias` (an app or a function). */
export function visibleSql(alias: string): string {
  return `${alias}.visibility = 'public' AND ${alias}.active`;
}
