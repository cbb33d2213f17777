import type { ExecutionSource } from './execution.entity.js';

/** One execution as the service reports it to the log. */
export interface ExecutionRecord {
  project_id: string;
  app_name: string;
  function_name: string;
  linked_account_owner_id: string;
  success: boolean;
  upstream_status: number | null;
  duration_ms: number;
  error: string | null;
  /** When it started, in Unix milliseconds. */
  started_at_ms: number;
  /** Where the call came from; REST when not said. */
  source?: ExecutionSource;
  /** The MCP token the call was made with. */
  mcp_token_id?: string | null;
}

/**
 * Execution-log rows waiting to be written, held as columns rather than one object per row.
 *
 * A busy service records thousands of executions a second, nearly all of the same few projects,
 * functions, owners and sources: those five text columns hold positions in one list of distinct values, so
 * a row costs a few numbers here and the insert parses small integers instead of repeated text.
 * The other columns become SQL array literals with one `join` each.
 */
export class ExecutionLogBatch {
  readonly ids: string[] = [];
  readonly startedAtMs: number[] = [];
  readonly projects: number[] = [];
  readonly apps: number[] = [];
  readonly functions: number[] = [];
  readonly owners: number[] = [];
  readonly successes: boolean[] = [];
  readonly statuses: (number | null)[] = [];
  readonly durations: number[] = [];
  readonly errors: (string | null)[] = [];
  readonly sources: number[] = [];
  readonly tokens: (string | null)[] = [];
  /** The distinct values of the five text columns; positions start at 1, as in SQL arrays. */
  readonly values: string[] = [];
  private readonly positions = new Map<string, number>();

  get size(): number {
    return this.ids.length;
  }

  add(id: string, row: ExecutionRecord): void {
    this.ids.push(id);
    this.startedAtMs.push(row.started_at_ms);
    this.projects.push(this.position(row.project_id));
    this.apps.push(this.position(row.app_name));
    this.functions.push(this.position(row.function_name));
    this.owners.push(this.position(row.linked_account_owner_id));
    this.successes.push(row.success);
    this.statuses.push(row.upstream_status);
    this.durations.push(row.duration_ms);
    this.errors.push(row.error);
    this.sources.push(this.position(row.source ?? 'rest'));
    this.tokens.push(row.mcp_token_id ?? null);
  }

  /** Row `index` of this batch as a batch of its own (to write rows one by one when a batch is refused). */
  row(index: number): ExecutionLogBatch {
    const single = new ExecutionLogBatch();
    single.add(this.ids[index], {
      project_id: this.values[this.projects[index] - 1],
      app_name: this.values[this.apps[index] - 1],
      function_name: this.values[this.functions[index] - 1],
      linked_account_owner_id: this.values[this.owners[index] - 1],
      success: this.successes[index],
      upstream_status: this.statuses[index],
      duration_ms: this.durations[index],
      error: this.errors[index],
      started_at_ms: this.startedAtMs[index],
      source: this.values[this.sources[index] - 1] as ExecutionSource,
      mcp_token_id: this.tokens[index],
    });
    return single;
  }

  private position(value: string): number {
    let position = this.positions.get(value);
    if (position === undefined) {
      position = this.values.push(value);
      this.positions.set(value, position);
    }
    return position;
  }
}

/**
 * A PostgreSQL array literal of values that need no quoting (UUIDs, integers, booleans, numbers):
 * one join instead of the driver quoting and escaping every element.
 */
export function plainArrayLiteral(values: readonly (string | number | boolean | null)[]): string {
  return `{${values.map((value) => (value === null ? 'NULL' : value)).join(',')}}`;
}
