import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The full ACI catalogue (98 apps, 987 functions) and its search eval sets live beside the
 * repository in ../shared, which a bare clone does not have. Tests that need them are skipped
 * there, with the reason in their title; everything else uses the fixtures in test/fixtures.
 * PATCHBAY_SHARED names that folder for a checkout elsewhere (a git worktree), as for the benches.
 */
const SHARED = resolve(process.env.PATCHBAY_SHARED ?? resolve(ROOT, '../shared'));
export const ACI_CATALOG = resolve(SHARED, 'catalogs/aci');
export const ACI_EVAL = resolve(SHARED, 'eval');
export const ACI_PRESENT = existsSync(ACI_CATALOG) && existsSync(ACI_EVAL);

/** `title`, with why it is skipped when the full catalogue is not beside this checkout. */
export function needsAci(title: string): string {
  return ACI_PRESENT ? title : `${title} (skipped: ../shared/catalogs/aci is not beside this checkout)`;
}
