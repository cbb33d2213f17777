import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import lockfile from 'proper-lockfile';

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
 * PostgreSQL in-process (PGlite with pgvector), served over the PostgreSQL wire protocol on a
 * loopback port so that TypeORM and `pg` use exactly the code path they use against a server.
 * A data directory on disk is owned by exactly one process: PGlite has no cross-process locking and
 * two openers silently lose writes, so the folder is locked before it is opened.
 */
export class EmbeddedDatabase {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
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
      const db = await PGlite.create({
        dataDir: dataDir ? join(dataDir, 'pgdata') : undefined,
        extensions: { vector },
        loadDataDir: options.loadDataDir,
      });
      const server = new PGLiteSocketServer({
        db,
        host: '127.0.0.1',
        port: 0,
        maxConnections: options.maxConnections,
      });
      await server.start();
      const port = Number(server.getServerConn().split(':').pop());
      return new EmbeddedDatabase(db, server, port, release);
    } catch (error) {
      await release?.();
      throw error;
    }
  }

  get host(): string {
    return '127.0.0.1';
  }

  async dump(): Promise<Blob> {
    return this.db.dumpDataDir('none');
  }

  async close(): Promise<void> {
    await this.server.stop();
    await this.db.close();
    await this.release?.();
  }
}

async function lockDataDir(dataDir: string, holder: string): Promise<() => Promise<void>> {
  const holderPath = join(dataDir, HOLDER_FILE);
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockfile.lock(dataDir, { lockfilePath: join(dataDir, 'patchbay.lock'), stale: 15_000 });
  } catch (error) {
    if ((error as { code?: string }).code === 'ELOCKED') {
      throw new DataDirLockedError(dataDir, describeHolder(holderPath));
    }
    throw error;
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

function describeHolder(holderPath: string): string {
  try {
    const info = JSON.parse(readFileSync(holderPath, 'utf8')) as { pid: number; host: string; holder: string };
    return `${info.holder} (pid ${info.pid} on ${info.host})`;
  } catch {
    return 'another process';
  }
}
