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
 * Execution-log rows waiting to be written, held as columns rather than one object per row: the insert
 * sends each column as one array (src/database/binary-arrays.ts).
 */
export class ExecutionLogBatch {
  readonly ids: string[] = [];
  readonly startedAtMs: number[] = [];
  readonly projects: string[] = [];
  readonly apps: string[] = [];
  readonly functions: string[] = [];
  readonly owners: string[] = [];
  readonly successes: boolean[] = [];
  readonly statuses: (number | null)[] = [];
  readonly durations: number[] = [];
  readonly errors: (string | null)[] = [];
  readonly sources: ExecutionSource[] = [];
  readonly tokens: (string | null)[] = [];

  get size(): number {
    return this.ids.length;
  }

  add(id: string, row: ExecutionRecord): void {
    this.ids.push(id);
    this.startedAtMs.push(row.started_at_ms);
    this.projects.push(row.project_id);
    this.apps.push(row.app_name);
    this.functions.push(row.function_name);
    this.owners.push(row.linked_account_owner_id);
    this.successes.push(row.success);
    this.statuses.push(row.upstream_status);
    this.durations.push(row.duration_ms);
    this.errors.push(row.error);
    this.sources.push(row.source ?? 'rest');
    this.tokens.push(row.mcp_token_id ?? null);
  }

  /** Row `index` of this batch as a batch of its own (to write rows one by one when a batch is refused). */
  row(index: number): ExecutionLogBatch {
    const single = new ExecutionLogBatch();
    single.add(this.ids[index], {
      project_id: this.projects[index],
      app_name: this.apps[index],
      function_name: this.functions[index],
      linked_account_owner_id: this.owners[index],
      success: this.successes[index],
      upstream_status: this.statuses[index],
      duration_ms: this.durations[index],
      error: this.errors[index],
      started_at_ms: this.startedAtMs[index],
      source: this.sources[index],
      mcp_token_id: this.tokens[index],
    });
    return single;
  }
}
