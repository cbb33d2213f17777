import type { Spend } from './rate-limits.repository.js';

/** Of a budget's limit, the most one instance takes in one lease (at least one request): its tolerance. */
export const LEASE_SHARE = 0.01;
/** A lease used up sooner than this after the one before it doubles the next; four times as slow halves it. */
export const LEASE_TARGET_MS = 100;
/** Tokens of a lease not spent within this long are dropped (they stay counted): a lease is for a burst. */
export const LEASE_TTL_MS = 1_000;
/** Past this many subjects held in memory, those with nothing held are forgotten at once. */
const CELLS_MAX = 50_000;

/** Takes `count` requests of a subject's GCRA budget in one statement (all or none). */
export type TakeTokens = (subject: string, intervalMs: number, windowMs: number, count: number) => Promise<Spend>;

/** What one request is told: granted with the `RateLimit-*` figures, or refused with the seconds to wait. */
export type LeaseDecision =
  { granted: true; remaining: number; resetSeconds: number } | { granted: false; retryAfterSeconds: number };

/** This instance's share of one subject's budget. */
interface Cell {
  limit: number;
  windowMs: number;
  /** Requests taken from the budget and not yet granted here. */
  tokens: number;
  /** The cell's theoretical arrival time right after the last lease, on the database's clock. */
  tat: number;
  /** The database's clock minus this process's, as read with the last statement. */
  clockOffset: number;
  /** When the last lease was taken (this process's clock; 0 for never) and when its tokens lapse. */
  takenAt: number;
  expiresAt: number;
  /** The next lease's size. */
  size: number;
  /** Refused without a statement until then (this process's clock): the budget has nothing before that. */
  refusedUntil: number;
  /** The database's time at which the next request comes back, for Retry-After. */
  nextAt: number;
  /** The statement in flight, which later requests wait for instead of sending their own: whether it was granted. */
  pending?: Promise<boolean>;
  waiting: number;
}

/**
 * A request budget (GCRA, one cell per subject in the database, shared by every instance) spent in leases: an
 * instance takes several requests of a subject's budget in one statement and grants them from memory, so that a
 * busy key costs a statement per lease instead of one per request, and concurrent requests no longer queue on the
 * cell's row lock. Measured with `npm run bench:execute` on PostgreSQL at concurrency 64 (see docs/benchmarks.md).
 *
 * The lease adapts to the rate: it starts at one request (so a slow client sees exactly the budget, as with one
 * statement per request), doubles while leases are used up within LEASE_TARGET_MS of each other (and covers the
 * requests already waiting), and halves when they last longer or lapse unspent. It never exceeds LEASE_SHARE of
 * the limit (at least one request), which bounds the error across N instances: the requests one instance holds
 * were counted when taken, so in any window a subject is granted at most N × that share more than the limit, and
 * a request may be refused while at most (N − 1) × that share lie unspent on other instances (for LEASE_TTL_MS at
 * most). A budget smaller than 1 / LEASE_SHARE is never leased more than one request at a time: it stays exact.
 *
 * A refusal is remembered until the budget has a request again (only time gives one back), so a client past its
 * budget costs no statement either.
 */
export class BudgetLeases {
  private readonly cells = new Map<string, Cell>();

  constructor(private readonly take: TakeTokens) {}

  /**
   * One request of the subject's budget: decided at once (no promise) when this instance holds a token of a live
   * lease or knows the budget is spent; otherwise once a lease statement answers.
   */
  spend(subject: string, limit: number, windowMs: number): LeaseDecision | Promise<LeaseDecision> {
    const cell = this.cell(subject, limit, windowMs);
    return this.decidedFromMemory(cell) ?? this.spendAfterLease(subject, cell);
  }

  /** The decision this instance can make without a statement: a token of a live lease, or a budget known spent. */
  private decidedFromMemory(cell: Cell): LeaseDecision | undefined {
    const now = Date.now();
    if (cell.tokens > 0 && now < cell.expiresAt) {
      cell.tokens -= 1;
      return this.granted(cell, now);
    }
    if (now < cell.refusedUntil) {
      return { granted: false, retryAfterSeconds: secondsUntil(cell.nextAt, now + cell.clockOffset) };
    }
    return undefined;
  }

  /** The rest of `spend`: waits for the lease in flight, or takes one, until the request is decided. */
  private async spendAfterLease(subject: string, cell: Cell): Promise<LeaseDecision> {
    for (;;) {
      if (cell.pending) {
        cell.waiting += 1;
        try {
          await cell.pending;
        } finally {
          cell.waiting -= 1;
        }
      } else {
        const lease = this.lease(subject, cell);
        cell.pending = lease;
        let granted: boolean;
        try {
          granted = await lease;
        } finally {
          cell.pending = undefined;
        }
        if (!granted) {
          // The database's own refusal answers the request that asked (as without leases), whatever the clocks say.
          return { granted: false, retryAfterSeconds: secondsUntil(cell.nextAt, Date.now() + cell.clockOffset) };
        }
      }
      const decided = this.decidedFromMemory(cell);
      if (decided) {
        return decided;
      }
    }
  }

  /** Forgets the subjects that hold nothing (called once a minute, and when there are too many). */
  prune(): void {
    const now = Date.now();
    for (const [subject, cell] of this.cells) {
      if (!cell.pending && now >= cell.expiresAt && now >= cell.refusedUntil) {
        this.cells.delete(subject);
      }
    }
  }

  private cell(subject: string, limit: number, windowMs: number): Cell {
    let cell = this.cells.get(subject);
    // A changed limit (an app configuration's owner budget) starts afresh; what was held is dropped, still counted.
    if (!cell || cell.limit !== limit || cell.windowMs !== windowMs) {
      if (this.cells.size >= CELLS_MAX) {
        this.prune();
      }
      cell = {
        limit,
        windowMs,
        tokens: 0,
        tat: 0,
        clockOffset: 0,
        takenAt: 0,
        expiresAt: 0,
        size: 1,
        refusedUntil: 0,
        nextAt: 0,
        waiting: 0,
      };
      this.cells.set(subject, cell);
    }
    return cell;
  }

  private async lease(subject: string, cell: Cell): Promise<boolean> {
    const interval = cell.windowMs / cell.limit;
    const most = Math.max(1, Math.floor(cell.limit * LEASE_SHARE));
    const now = Date.now();
    if (cell.tokens > 0 || now - cell.takenAt > 4 * LEASE_TARGET_MS) {
      cell.size = Math.max(1, cell.size >> 1);
    } else if (now - cell.takenAt < LEASE_TARGET_MS) {
      cell.size = Math.min(most, cell.size * 2);
    }
    cell.tokens = 0;
    let count = Math.min(most, Math.max(cell.size, cell.waiting + 1));
    let spend = await this.take(subject, interval, cell.windowMs, count);
    if (spend.granted === null && count > 1) {
      // Fewer than `count` left: take them one at a time, as without leases.
      count = 1;
      cell.size = 1;
      spend = await this.take(subject, interval, cell.windowMs, 1);
    }
    const local = Date.now();
    cell.clockOffset = spend.now - local;
    if (spend.granted === null) {
      cell.nextAt = (spend.previous ?? spend.now) + interval - cell.windowMs;
      cell.refusedUntil = cell.nextAt - cell.clockOffset;
      return false;
    }
    cell.tokens = count;
    cell.tat = spend.granted;
    cell.takenAt = local;
    cell.expiresAt = local + LEASE_TTL_MS;
    return true;
  }

  /**
   * The figures of a request granted from the lease: what the database has left plus what this instance still
   * holds, and when the cell would be full again had only the requests granted so far been counted.
   */
  private granted(cell: Cell, now: number): LeaseDecision {
    const interval = cell.windowMs / cell.limit;
    const dbNow = now + cell.clockOffset;
    const left = Math.max(0, Math.floor((dbNow + cell.windowMs - Math.max(cell.tat, dbNow)) / interval));
    return {
      granted: true,
      remaining: Math.min(cell.limit - 1, left + cell.tokens),
      resetSeconds: Math.max(0, Math.ceil((cell.tat - cell.tokens * interval - dbNow) / 1000)),
    };
  }
}

export function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
