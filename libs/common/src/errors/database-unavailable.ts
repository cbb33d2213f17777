import { DomainError } from './domain.error.js';

/** The database does not answer (stopped, restarting, unreachable): the request may be retried later. */
export class DatabaseUnavailableError extends DomainError {
  readonly status = 503;

  constructor() {
    super('Database unavailable; retry later');
  }
}

/** Socket errors of a connection that could not be opened or was lost. */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
]);
/** SQLSTATEs of a server that is going away or not yet accepting: admin_shutdown, crash_shutdown, cannot_connect_now. */
const SHUTDOWN_STATES = new Set(['57P01', '57P02', '57P03']);
/** What node-postgres says when a connection ends under it or cannot be had in time. */
const LOST_CONNECTION =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/** What node-postgres rejects a query with when it passes the client's `query_timeout`. */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * Whether a query passed the client's time limit (`query_timeout`): the database is too busy to
 * answer in time, and the request may be retried later, like one that could not reach it.
 */
export function isDatabaseTimeout(error: unknown): boolean {
  return [error, (error as { driverError?: unknown } | undefined)?.driverError].some(
    (candidate) => candidate instanceof Error && candidate.message === QUERY_TIMEOUT_MESSAGE,
  );
}

/**
 * Whether an error thrown by a query means the database could not be reached, rather than that it
 * refused the statement. TypeORM keeps the driver's error as `driverError`; SQLSTATE class 08 is
 * "connection exception".
 */
export function isDatabaseConnectionError(error: unknown): boolean {
  for (const candidate of [error, (error as { driverError?: unknown } | undefined)?.driverError]) {
    if (!(candidate instanceof Error)) {
      continue;
    }
    const code = (candidate as { code?: unknown }).code;
    if (
      typeof code === 'string' &&
      (CONNECTION_ERROR_CODES.has(code) || SHUTDOWN_STATES.has(code) || code.startsWith('08'))
    ) {
      return true;
    }
    if (LOST_CONNECTION.test(candidate.message)) {
      return true;
    }
  }
  return false;
}
