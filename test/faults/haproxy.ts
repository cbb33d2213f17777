import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../helpers/free-port.js';

/** The Debian package's binary (not on a non-root PATH), else whatever PATH finds. */
const BIN = existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy';

/** How often HAProxy asks each instance's readiness, and how many answers flip its state. */
export const CHECK_INTERVAL_MS = 500;
export const CHECK_FALL = 2;
export const CHECK_RISE = 2;

/** One backend server's state as HAProxy's statistics say it (`UP`, `DOWN`, `UP 1/2`, …). */
export interface ServerState {
  name: string;
  status: string;
}

/**
 * HAProxy (the Debian package) on a free 127.0.0.1 port in front of the given instances, configured
 * by the scaled deployment's file (deploy/haproxy/haproxy.cfg, see haproxyConfig): round robin,
 * readiness health checks, retries of idempotent requests on a refused connection or an empty
 * answer, redispatched to another instance. Each answer names the instance that served it
 * (X-Served-By) for the tests; a statistics page on a second port tells the servers' states.
 */
export class Haproxy {
  private constructor(
    private readonly dir: string,
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly statsPort: number,
    private output: () => string,
  ) {}

  static available(): boolean {
    try {
      execFileSync(BIN, ['-v'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  /** `port`: where to listen (the caller may need the address before the balancer starts). */
  static async start(servers: string[], port: number): Promise<Haproxy> {
    const dir = mkdtempSync(join(tmpdir(), 'patchbay-haproxy-'));
    const statsPort = await freePort();
    const config = join(dir, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(servers, port, statsPort));
    execFileSync(BIN, ['-c', '-q', '-f', config], { stdio: 'pipe' });
    const child = spawn(BIN, ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const balancer = new Haproxy(dir, child, port, statsPort, () => output);
    await balancer.until('every instance up', 30_000, (states) => states.every((s) => s.status === 'UP'));
    return balancer;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get log(): string {
    return this.output();
  }

  /** The instances' states, from the statistics page's CSV (column `status`). */
  async servers(): Promise<ServerState[]> {
    const response = await fetch(`http://127.0.0.1:${this.statsPort}/stats;csv`);
    const [header, ...rows] = (await response.text()).trim().split('\n');
    const columns = header.replace(/^# /, '').split(',');
    const name = columns.indexOf('svname');
    const status = columns.indexOf('status');
    return rows
      .map((row) => row.split(','))
      .filter((cells) => cells[0] === 'instances' && !['FRONTEND', 'BACKEND'].includes(cells[name]))
      .map((cells) => ({ name: cells[name], status: cells[status] }));
  }

  async until(what: string, timeoutMs: number, condition: (states: ServerState[]) => boolean): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let states: ServerState[] = [];
    for (;;) {
      if (this.child.exitCode !== null) {
        throw new Error(`haproxy exited with ${this.child.exitCode}: ${this.output()}`);
      }
      states = await this.servers().catch(() => []);
      if (states.length > 0 && condition(states)) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`haproxy: ${what} not within ${timeoutMs} ms (${JSON.stringify(states)})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = once(this.child, 'exit');
      this.child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The balancer's configuration of the scaled deployment, which the test runs with its own addresses. */
export const SHIPPED_CONFIG = resolve('deploy/haproxy/haproxy.cfg');

/**
 * The shipped configuration (SHIPPED_CONFIG) as the test runs it: its global, defaults and frontend
 * sections as they are (the retry and redispatch policy under test) but for the listening address;
 * its backend's balancing and health check with the test's instances (`servers`: `host:port`, named
 * patchbay1, patchbay2, … in that order) in place of the replicas Docker's DNS names, checked every
 * CHECK_INTERVAL_MS; an X-Served-By header; a statistics page. Throws when the shipped file no longer
 * has the lines this rewrites, so that the test never runs a configuration of its own by mistake.
 */
function haproxyConfig(servers: string[], port: number, statsPort: number): string {
  const sections = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of readFileSync(SHIPPED_CONFIG, 'utf8').split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) {
      current = [];
      sections.set(line.trim(), current);
    } else if (line.trim() && !line.trim().startsWith('#')) {
      current.push(line);
    }
  }
  const section = (name: string) => {
    const lines = sections.get(name);
    if (!lines) {
      throw new Error(`${SHIPPED_CONFIG} has no "${name}" section`);
    }
    return lines;
  };
  const frontend = section('frontend patchbay');
  const bind = frontend.findIndex((line) => /^\s*bind\s/.test(line));
  const backend = section('backend instances');
  const replicas = backend.filter((line) => /^\s*(default-server|server-template)\s/.test(line));
  if (bind < 0 || replicas.length !== 2) {
    throw new Error(`${SHIPPED_CONFIG}: the frontend's bind or the backend's default-server and server-template moved`);
  }
  frontend[bind] = `  bind 127.0.0.1:${port}`;
  return [
    'global',
    ...section('global'),
    '',
    'defaults',
    ...section('defaults'),
    '',
    'frontend patchbay',
    ...frontend,
    '',
    'backend instances',
    ...backend.filter((line) => !replicas.includes(line)),
    '  http-response set-header X-Served-By %[srv_name]',
    `  default-server check inter ${CHECK_INTERVAL_MS}ms fall ${CHECK_FALL} rise ${CHECK_RISE}`,
    ...servers.map((server, i) => `  server patchbay${i + 1} ${server}`),
    '',
    'frontend stats',
    `  bind 127.0.0.1:${statsPort}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n');
}
