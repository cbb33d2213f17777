import { describe, expect, it } from 'vitest';
import { BudgetLeases, type LeaseDecision } from './budget-leases.js';
import type { Spend } from './rate-limits.repository.js';

/**
 * The database's cell, kept in memory: the same GCRA rule as RateLimitsRepository.spend (all or none of `count`),
 * answering after a turn of the event loop as a statement would, and counting the statements.
 */
class MemoryCells {
  readonly cells = new Map<string, number>();
  statements = 0;
  readonly counts: number[] = [];

  take = async (subject: string, intervalMs: number, windowMs: number, count: number): Promise<Spend> => {
    await new Promise((resolve) => setImmediate(resolve));
    this.statements += 1;
    this.counts.push(count);
    const now = Date.now();
    const previous = this.cells.get(subject) ?? null;
    const next = Math.max(previous ?? now, now) + intervalMs * count;
    if (previous !== null && next > now + windowMs) {
      return { now, granted: null, previous };
    }
    this.cells.set(subject, next);
    return { now, granted: next, previous };
  };
}

const HOUR_MS = 3_600_000;
/** A window so long that no request comes back while a test runs (one per 1,000 s at a limit of a million). */
const AGES_MS = 1e12;
const granted = (decisions: LeaseDecision[]) => decisions.filter((decision) => decision.granted).length;

describe('BudgetLeases', () => {
  it('spends a slow client’s budget one statement per request, with the exact remaining count, then refuses', async () => {
    const cells = new MemoryCells();
    const leases = new BudgetLeases(cells.take);
    const decisions: LeaseDecision[] = [];
    for (let i = 0; i < 4; i += 1) {
      decisions.push(await leases.spend('key:a', 3, 60_000));
    }
    expect(decisions.slice(0, 3).map((decision) => decision.granted && decision.remaining)).toEqual([2, 1, 0]);
    expect(decisions[3]).toEqual({ granted: false, retryAfterSeconds: expect.any(Number) });
    expect(cells.counts).toEqual([1, 1, 1, 1]);
  });

  it('grants a busy subject from leases: far fewer statements than requests, every request counted', async () => {
    const cells = new MemoryCells();
    const leases = new BudgetLeases(cells.take);
    const decisions = await Promise.all(
      Array.from({ length: 2_000 }, async () => leases.spend('key:busy', 1_000_000, AGES_MS)),
    );
    expect(granted(decisions)).toBe(2_000);
    expect(cells.statements).toBeLessThan(100);
    // What the cell counted covers every grant, and at most the last lease more.
    const counted = cells.counts.reduce((sum, count) => sum + count, 0);
    expect(counted).toBeGreaterThanOrEqual(2_000);
    expect(counted - 2_000).toBeLessThanOrEqual(cells.counts.at(-1) ?? 0);
    // The figures stay truthful: every grant is told a different remaining count, below the limit.
    const remaining = decisions.map((decision) => (decision.granted ? decision.remaining : -1));
    expect(new Set(remaining).size).toBe(2_000);
    expect(Math.max(...remaining)).toBeLessThan(1_000_000);
  });

  it('keeps two instances within the stated tolerance of the limit: never over, under by at most one lease', async () => {
    const cells = new MemoryCells();
    const first = new BudgetLeases(cells.take);
    const second = new BudgetLeases(cells.take);
    const limit = 1_000;
    const decisions = await Promise.all(
      Array.from({ length: 1_600 }, async (_, i) => (i % 2 === 0 ? first : second).spend('key:shared', limit, HOUR_MS)),
    );
    // A lease is at most 1 % of the limit: 10 requests here.
    expect(Math.max(...cells.counts)).toBeLessThanOrEqual(10);
    expect(granted(decisions)).toBeLessThanOrEqual(limit);
    expect(granted(decisions)).toBeGreaterThanOrEqual(limit - 10);
  });

  it('never leases more than one request of a budget under 100, so it stays exact under concurrency', async () => {
    const cells = new MemoryCells();
    const first = new BudgetLeases(cells.take);
    const second = new BudgetLeases(cells.take);
    const decisions = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => (i % 2 === 0 ? first : second).spend('owner:p:o', 3, HOUR_MS)),
    );
    expect(granted(decisions)).toBe(3);
    expect(new Set(cells.counts)).toEqual(new Set([1]));
  });

  it('remembers a refusal until the budget has a request again: no statement meanwhile', async () => {
    const cells = new MemoryCells();
    const leases = new BudgetLeases(cells.take);
    await leases.spend('key:spent', 1, HOUR_MS);
    const refused = await leases.spend('key:spent', 1, HOUR_MS);
    const statements = cells.statements;
    const again = await Promise.all(Array.from({ length: 50 }, async () => leases.spend('key:spent', 1, HOUR_MS)));
    expect(refused).toEqual({ granted: false, retryAfterSeconds: 3_600 });
    expect(granted(again)).toBe(0);
    expect(cells.statements).toBe(statements);
  });

  it('asks the database again when a subject’s limit changes, rather than answering from the old refusal', async () => {
    const cells = new MemoryCells();
    const leases = new BudgetLeases(cells.take);
    await leases.spend('owner:p:app:o', 1, HOUR_MS);
    expect((await leases.spend('owner:p:app:o', 1, HOUR_MS)).granted).toBe(false);
    const statements = cells.statements;
    await leases.spend('owner:p:app:o', 5, HOUR_MS);
    expect(cells.statements).toBe(statements + 1);
  });

  it('hands a failed statement’s error to every request waiting for it, and tries again on the next', async () => {
    let fail = true;
    const cells = new MemoryCells();
    const leases = new BudgetLeases(async (...args) => {
      if (fail) {
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('database away');
      }
      return cells.take(...args);
    });
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, async () => leases.spend('key:x', 100, HOUR_MS)),
    );
    expect(results.map((result) => result.status)).toEqual(Array(5).fill('rejected'));
    fail = false;
    expect((await leases.spend('key:x', 100, HOUR_MS)).granted).toBe(true);
  });
});
