import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The starter catalogue ships as JSON beside this module's source. Compiled code runs from dist/,
 * so the folder is found from the package root rather than relative to this file.
 */
export function starterCatalogPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'patchbay') {
      return join(dir, 'src', 'catalog', 'starter');
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error('Cannot find the patchbay package root to locate the starter catalogue');
    }
    dir = parent;
  }
}
