import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';

const BIN = '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL cluster of the test's own, on a free port, that the test may stop and start: the
 * machine's shared server is never touched. Run as the `postgres` user (the server refuses root),
 * trust authentication on 127.0.0.1; pgvector is installed system-wide.
 */
export class PrivatePostgres {
  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  static available(): boolean {
    try {
      execFileSync(`${BIN}/pg_ctl`, ['--version'], { stdio: 'ignore' });
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-pg-'));
    // The postgres user must be able to enter the folder that holds the cluster and its socket.
    chmodSync(dir, 0o777);
    const cluster = new PrivatePostgres(dir, await freePort());
    cluster.asPostgres(`${BIN}/initdb`, ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    cluster.startServer();
    return cluster;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** Starts the server and waits until it accepts connections. */
  startServer(): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    this.asPostgres(`${BIN}/pg_ctl`, ['-D', this.dataDir, '-o', options, '-l', join(this.dir, 'log'), '-w', 'start']);
  }

  /** Stops the server at once, ending every session (what a crash or a failover does to the clients). */
  stopServer(): void {
    this.asPostgres(`${BIN}/pg_ctl`, ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
  }

  destroy(): void {
    try {
      this.stopServer();
    } catch {
      // Already stopped.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private asPostgres(command: string, args: string[]): void {
    execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { stdio: 'pipe' });
  }
}
