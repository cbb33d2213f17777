// Preloaded (`node --import`) by conformance-mcp.mjs: @modelcontextprotocol/conformance (0.1.x, and the 0.2
// pre-release installed as @modelcontextprotocol/conformance-next) imports
// `globSync` from node:fs, which exists from Node 22 on, so on Node 20 the suite fails to load at all.
// Only its `tier-check` command calls it; for the suite's own modules `fs` resolves to node:fs plus a
// globSync that says so. On Node 22 and later nothing is changed.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  const hooks = `
    const SHIM = 'patchbay-conformance-shim:fs';
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') && /\\/@modelcontextprotocol\\/conformance(-next)?\\//.test(context.parentURL ?? '')) {
        return { url: SHIM, shortCircuit: true };
      }
      return next(specifier, context);
    }
    export async function load(url, context, next) {
      if (url === SHIM) {
        return {
          format: 'module',
          shortCircuit: true,
          source: "import fs from 'node:fs'; export * from 'node:fs'; export default fs; " +
            "export function globSync() { throw new Error('fs.globSync needs Node 22 or later'); }",
        };
      }
      return next(url, context);
    }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
