/**
 * The visibility rule, in one place: an app or function is offered (listed, searched, defined, run)
 * when it is public and active; a function also needs its app to be visible. A private app (a remote
 * MCP server a project added as its own) is visible, active, to the project that owns it alone.
 */
export const VISIBLE = { visibility: 'public', active: true } as const;

/** The rule as a SQL condition on the row aliased `alias` (an app or a function): the public catalogue. */
export function visibleSql(alias: string): string {
  return `${alias}.visibility = 'public' AND ${alias}.active`;
}

/**
 * The rule for one project as a SQL condition on the app aliased `alias`: the public catalogue and the
 * project's own apps. `projectParam` names the query parameter that holds the project's id.
 */
export function visibleToSql(alias: string, projectParam = 'projectId'): string {
  return `${alias}.active AND (${alias}.visibility = 'public' OR ${alias}.project_id = :${projectParam})`;
}

/** The rule for one project, on an app row already read. */
export function isVisibleTo(
  app: { visibility: string; active: boolean; project_id: string | null },
  projectId: string,
): boolean {
  return app.active && (app.visibility === 'public' || (app.project_id !== null && app.project_id === projectId));
}
