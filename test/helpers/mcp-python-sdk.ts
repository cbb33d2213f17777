import { execFile, execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '../..');
const PYTHON = join(ROOT, '.venv-mcp-sdk/bin/python');

/** The official Python MCP SDK's virtual environment, made once (by the first test file that needs it). */
export function setUpMcpPythonSdk(): void {
  execFileSync('bash', [join(ROOT, 'scripts/setup-mcp-python-sdk.sh')], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * Runs a script of test/sdk/mcp_python with the SDK's Python and `env` (with PATH, nothing else of this
 * process's environment), and answers the JSON of the last line it printed.
 */
export async function runMcpPythonScript<T>(
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<T> {
  const { stdout } = await promisify(execFile)(PYTHON, [join(ROOT, 'test/sdk/mcp_python', script), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as T;
}
