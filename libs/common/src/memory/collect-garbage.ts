import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/**
 * A full garbage collection now, for a moment when a large burst of work has just left garbage behind
 * and nothing else is waiting (the search index just loaded). V8 collects its old generation when it
 * next needs room, and keeps the pages it grew to meanwhile: at 98,700 functions the service's RSS
 * after loading the index and 150 searches was 504–583 MB over two runs, 458–486 MB with one
 * collection once the load was done (2026-11-28, embedded database). It costs a pause of the main
 * thread (tens of milliseconds for a heap of that size' live data).
 *
 * V8 exposes its collector to a context created after `--expose-gc` is set; the process's own
 * context is left as it was (no global `gc`).
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
