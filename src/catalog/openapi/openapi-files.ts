// Apart from openapi-source.ts: the import's main thread lists files but never loads the parser.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';

const EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

/** The documents a SOURCE stands for: the file itself, or every JSON/YAML file under the folder, sorted. */
export function openApiFiles(source: string): string[] {
  const root = resolve(source);
  if (!existsSync(root)) {
    throw new Error(`${source} does not exist`);
  }
  if (!statSync(root).isDirectory()) {
    return [root];
  }
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) {
        walk(path);
      } else if (EXTENSIONS.has(extname(entry).toLowerCase())) {
        files.push(path);
      }
    }
  };
  walk(root);
  return files;
}
