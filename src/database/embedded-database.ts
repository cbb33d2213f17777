import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import lockfile from 'proper-lockfile';
import type { EmbeddedWorkerData, EmbeddedWorkerMessage, EmbeddedWorkerRequest } from './embedded-database.worker.js';

export interface EmbeddedDatabaseOptions {
  /** A folder on disk, or `memory://` for a throw-away database. */
  dataDir: string;
  /** A dump of a data directory to start from (tests start from a migrated template). */
  loadDataDir?: Blob;
  maxConnections: number;
  /** What this process is, written next to the lock so that a second opener can be told who holds it. */
  holder: string;
}

const HOLDER_FILE = 'patchbay.holder.json';

/**
 * PGlite's PostgreSQL (9 MB of WebAssembly) runs on V8's baseline compiler only. With the default
 * tiering, hot functions are compiled again by the optimising compiler, and the process keeps what
 * that costs: measured on the service (2026-11-28, the machine loaded), 316 → 273 MB RSS at start on
 * the ACI catalogue and 597 → 539 MB at 98,700 functions, search latency unchanged (it is answered
 * from memory), a 987-function import 3.45 → 2.77 s. Long database work is slower: loading the
 * search index of 98,700 functions at start took 32 → 40 s. `--no-wasm-tier-up` and a larger tiering
 * budget kept most of the memory. V8's flags are process-wide and read when a module is compiled,
 * so this is set before the worker starts.
 */
const WASM_FLAGS = '--liftoff-only';

export class DataDirLockedError extends Error {
  constructor(dataDir: string, holder: string) {
    super(
      `The data directory ${dataDir} is in use by ${holder}. Only one process may open it: stop that process, ` +
        `or run this command against the running service's database (set DATABASE_URL for a PostgreSQL server).`,
    );
    this.name = 'DataDirLockedError';
  }
}

/**
 * PostgreSQL in-process (PGlite with pgvector, on a worker thread), served over the PostgreSQL wire
 * protocol on a loopback port so that TypeORM and `pg` use exactly the code path they use against a
 * server. A data directory on disk is owned by exactly one process: PGlite has no cross-process
 * locking and two openers silently lose writes, so the folder is locked before it is opened.
 */
export class EmbeddedDatabase {
  private constructor(
    private readonly worker: Worker,
    readonly port: number,
    private readonly release?: () => Promise<void>,
  ) {}

  static async open(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
    let release: (() => Promise<void>) | undefined;
    let dataDir: string | undefined;
    if (!options.dataDir.startsWith('memory://')) {
      dataDir = resolve(options.dataDir);
      mkdirSync(dataDir, { recursive: true });
      release = await lockDataDir(dataDir, options.holder);
    }
    try {
      const loadDataDir = options.loadDataDir ? await options.loadDataDir.arrayBuffer() : undefined;
      const data: EmbeddedWorkerData = {
        pgData: dataDir ? join(dataDir, 'pgdata') : undefined,
        loadDataDir,
        maxConnections: options.maxConnections,
      };
      setFlagsFromString(WASM_FLAGS);
      const worker = new Worker(workerScript(), { workerData: data, transferList: loadDataDir ? [loadDataDir] : [] });
      const ready = await reply(worker, 'ready');
      return new EmbeddedDatabase(worker, ready.port, release);
    } catch (error) {
      await release?.();
      throw error;
    }
  }

  get host(): string {
    return '127.0.0.1';
  }

  async dump(): Promise<Blob> {
    const answer = reply(this.worker, 'dumped');
    this.worker.postMessage({ type: 'dump' } satisfies EmbeddedWorkerRequest);
    return new Blob([(await answer).data]);
  }

  /** Closes the database and ends its thread; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private closing?: Promise<void>;

  private async closeOnce(): Promise<void> {
    const closed = reply(this.worker, 'closed');
    this.worker.postMessage({ type: 'close' } satisfies EmbeddedWorkerRequest);
    await closed;
    await this.worker.terminate();
    await this.release?.();
  }
}

/**
 * The compiled worker next to this module. Under the test runner this module is TypeScript, which
 * a worker thread cannot load: the build's copy of the worker (the test setup builds first) serves.
 */
function workerScript(): URL {
  const here = new URL('./embedded-database.worker.js', import.meta.url);
  if (!import.meta.url.endsWith('.ts')) {
    return here;
  }
  return new URL(here.href.replace(/\/src\/database\/([^/]+)$/, '/dist/src/database/$1'));
}

/** The worker's next message of `type`; a failure to open, or the worker ending, rejects. */
function reply<T extends EmbeddedWorkerMessage['type']>(
  worker: Worker,
  type: T,
): Promise<Extract<EmbeddedWorkerMessage, { type: T }>> {
  return new Promise((resolvePromise, reject) => {
    const cleanup = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onMessage = (message: EmbeddedWorkerMessage) => {
      if (message.type === type) {
        cleanup();
        resolvePromise(message as Extract<EmbeddedWorkerMessage, { type: T }>);
      } else if (message.type === 'failed') {
        cleanup();
        reject(new Error(`The embedded database could not start: ${message.message}`));
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onExit = (code: number) => {
      cleanup();
      reject(new Error(`The embedded database thread ended (exit code ${code})`));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

async function lockDataDir(dataDir: string, holder: string): Promise<() => Promise<void>> {
  const holderPath = join(dataDir, HOLDER_FILE);
  const lockPath = join(dataDir, 'patchbay.lock');
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockfile.lock(dataDir, { lockfilePath: lockPath, stale: 15_000 });
  } catch (error) {
    if ((error as { code?: string }).code !== 'ELOCKED') {
      throw error;
    }
    // A process killed outright (SIGKILL, OOM) leaves its lock behind, fresh for up to `stale`: when the
    // holder named next to it ran on this host and is gone, the lock is taken over at once.
    if (!holderIsDead(holderPath)) {
      throw new DataDirLockedError(dataDir, describeHolder(holderPath));
    }
    rmSync(lockPath, { recursive: true, force: true });
    try {
      releaseLock = await lockfile.lock(dataDir, { lockfilePath: lockPath, stale: 15_000 });
    } catch (retryError) {
      if ((retryError as { code?: string }).code === 'ELOCKED') {
        throw new DataDirLockedError(dataDir, describeHolder(holderPath));
      }
      throw retryError;
    }
  }
  writeFileSync(
    holderPath,
    JSON.stringify({ pid: process.pid, host: hostname(), holder, since: new Date().toISOString() }),
  );
  return async () => {
    rmSync(holderPath, { force: true });
    await releaseLock();
  };
}

/** Whether the holder file names a process of this host that no longer runs. */
function holderIsDead(holderPath: string): boolean {
  let info: { pid?: unknown; host?: unknown };
  try {
    info = JSON.parse(readFileSync(holderPath, 'utf8')) as { pid?: unknown; host?: unknown };
  } catch {
    return false;
  }
  if (info.host !== hostname() || typeof info.pid !== 'number' || info.pid === process.pid) {
    return false;
  }
  try {
    process.kill(info.pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists under another user.
    return (error as { code?: string }).code === 'ESRCH';
  }
}

function describeHolder(holderPath: string): string {
  try {
    const info = JSON.parse(readFileSync(holderPath, 'utf8')) as { pid: number; host: string; holder: string };
    return `${info.holder} (pid ${info.pid} on ${info.host})`;
  } catch {
    return 'another process';
  }
}
