import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORD_VECTORS_FILE } from '../../../src/search/embeddings/word-vectors.js';
import { embeddedEnv } from '../../helpers/cli.js';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

const FIXTURES = resolve('test/fixtures/catalog/valid');

/**
 * An installation without the word-vector file: the built service copied (without assets/) beside a
 * node_modules that links every installed package.
 */
function installWithout(root: string): string {
  cpSync(resolve('dist'), join(root, 'dist'), { recursive: true });
  cpSync(resolve('package.json'), join(root, 'package.json'));
  mkdirSync(join(root, 'node_modules'));
  for (const entry of readdirSync(resolve('node_modules'))) {
    if (entry !== '.cache') {
      symlinkSync(resolve('node_modules', entry), join(root, 'node_modules', entry));
    }
  }
  return join(root, 'dist', 'src', 'main.js');
}

async function run(main: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [main, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  expect(code, output).toBe(0);
  return output;
}

describe('the service without its word-vector file', { timeout: 180_000 }, () => {
  let root: string;
  let main: string;
  let env: NodeJS.ProcessEnv;
  let child: ChildProcess | undefined;
  let apiKey: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'patchbay-nowv-'));
    main = installWithout(root);
    env = {
      ...embeddedEnv(join(root, 'data'), { LOG_LEVEL: 'info' }),
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
    };
  });

  /** `patchbay serve` on any free port: its address and what it logged until it listened. */
  async function serve(serveEnv: NodeJS.ProcessEnv): Promise<{ url: string; output: string }> {
    child?.kill('SIGTERM');
    if (child && child.exitCode === null) {
      await once(child, 'exit');
    }
    child = spawn(process.execPath, [main, 'serve', '--port', '0'], {
      env: serveEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const url = await new Promise<string>((done, fail) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
        if (match) {
          done(match[1]);
        }
      };
      child!.stdout!.on('data', onData);
      child!.stderr!.on('data', onData);
      child!.once('exit', (code) => fail(new Error(`serve exited with ${code}: ${output}`)));
    });
    return { url, output };
  }

  afterAll(() => {
    child?.kill('SIGTERM');
    rmSync(root, { recursive: true, force: true });
  });

  it('starts, says in the log that the word vectors are missing, and searches as before', async () => {
    // The command line logs warnings only; the service below logs the rest.
    await run(main, ['catalog', 'import', FIXTURES], env);
    ({ api_key: apiKey } = JSON.parse(
      (await run(main, ['projects', 'create', '--name', 'no vectors', '--json'], { ...env, LOG_LEVEL: 'warn' })).trim(),
    ) as { api_key: string });

    const { url, output } = await serve(env);
    expect(output).toContain(`Word vectors not found (${WORD_VECTORS_FILE})`);
    const response = await fetch(
      `${url}/v1/functions/search?intent=${encodeURIComponent('weather forecast')}&limit=3`,
      {
        headers: { 'x-api-key': apiKey },
      },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { name: string }[];
    expect(body[0].name).toBe('WEATHER_DEMO__GET_FORECAST');
  });
});
