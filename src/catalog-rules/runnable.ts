/**
 * The runnable rule, in one place: a project may run a function when its configuration of the app
 * is enabled and enables the function (all functions, or the function by name). Execution tells
 * the two parts apart for its errors; search filters and listings apply both.
 */
export interface FunctionEnablement {
  all_functions_enabled: boolean;
  enabled_functions: readonly string[];
}

/** Whether the (enabled) configuration enables the function. */
export function enablesFunction(configuration: FunctionEnablement, functionName: string): boolean {
  return configuration.all_functions_enabled || configuration.enabled_functions.includes(functionName);
}

/** The configuration aliased `c` is enabled (the first half of the rule, as SQL). */
export function configurationEnabledSql(c: string): string {
  return `${c}.enabled`;
}

/** The whole rule as SQL: configuration `c` is enabled and enables the function named by `functionName`. */
export function runnableSql(c: string, functionName: string): string {
  return `${configurationEnabledSql(c)} AND (${c}.all_functions_enabled OR ${functionName} = ANY(${c}.enabled_functions))`;
}

/**
 * The project (the `:projectId` parameter) has a configuration of the app named by `appName` (a SQL expression),
 * one that also meets `condition` when given (on the configuration aliased `c`): the `configured_only` filters,
 * with `runnableSql` the runnable one. By table name, as the rule sits below the module whose entity maps it.
 */
export function configuredSql(appName: string, condition?: string): string {
  const where = `c.app_name = ${appName} AND c.project_id = :projectId${condition ? ` AND ${condition}` : ''}`;
  return `EXISTS (SELECT 1 FROM "app_configurations" "c" WHERE ${where})`;
}
