import { QueryFailedError } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { AllExceptionsFilter } from './all-exceptions.filter.js';

describe('AllExceptionsFilter', () => {
  const filter = new AllExceptionsFilter();

  it('answers 503 to a query the database did not answer within the client time limit', () => {
    // What TypeORM throws when node-postgres gives up on a query after `query_timeout`.
    const timedOut = new QueryFailedError('SELECT 1', [], new Error('Query read timeout'));
    expect(filter.render(timedOut)).toEqual([503, { error: 'Database unavailable; retry later' }]);
  });

  it('answers 503 when no connection could be had in time, and 500 to an unexpected error', () => {
    expect(filter.render(new Error('timeout exceeded when trying to connect'))[0]).toBe(503);
    expect(filter.render(new Error('Query read timeout, or something else'))).toEqual([
      500,
      { error: 'Internal server error' },
    ]);
  });
});
