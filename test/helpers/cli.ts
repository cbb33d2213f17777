import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

const BIN = resolve('dist/src/main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for a CLI run on an embedded data directory (DATABASE_URL removed). */
export function embeddedEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra };
  delete env.DATABASE_URL;
  delete env.SECRETS_KEY;
  delete env.SECRETS_KEYS;
  return env;
}

/** Runs the compiled `patchbay` command to completion. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/**
 * Starts `patchbay serve --port 0` and resolves with its address once it listens (within `timeoutMs`:
 * several started at once on a loaded 2-core machine take longer than one).
 */
export async function startServe(
  env: NodeJS.ProcessEnv,
  extraArgs: string[] = [],
  timeoutMs = 30_000,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...extraArgs], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`serve did not start within ${timeoutMs} ms: ${output}`)),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${output}`));
    });
  });
  return { child, url, output: () => output };
}

export async function stopServe(child: ChildProcess): Promise<number | null> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  return code;
}
