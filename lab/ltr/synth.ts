// Learning-to-rank, step 2: synthetic training lists from the directory sample (corpus.ts), never
// from the evaluation sets. A query is one field of an operation (its summary, or the first sentence
// of its description); that field is removed from every document of the batch, so the candidates
// all look alike in what they lack. The target is the operation among the others of its document
// (within-app). Variant "bridge": the query also loses the words of the path's literal segments
// (the nouns the path names), keeping its verbs and other words, when two or more words remain.
// Usage: node dist-lab/lab/ltr/synth.js [corpus.json] [out.json]
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadWordVectors, WordNet } from '../../src/search/index.js';
import { stem, stems, words } from '../../src/search/text-analysis.js';
import type { CorpusApp } from './corpus.js';
import { type Catalogue, Indexed } from './features.js';

const IN = process.argv[2] ?? 'dist-lab/ltr-corpus.json';
const OUT = process.argv[3] ?? 'dist-lab/ltr-groups.json';
const K = 50;
const BATCH = 20;
const PER_APP = Number(process.env.PER_APP ?? 20);

export interface Group {
  view: 'summary' | 'description';
  variant: 'literal' | 'bridge';
  app: string;
  query: string;
  /** Index of the target among the candidates. */
  label: number;
  candidates: number[][];
}

const corpus = JSON.parse(readFileSync(IN, 'utf8')) as CorpusApp[];
const wordnet = WordNet.open()!;
const vectors = loadWordVectors()!;
const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const firstSentence = (s: string) => (s.match(/^.*?[.!?](\s|$)/)?.[0] ?? s).trim().slice(0, 200);
const groups: Group[] = [];
const started = performance.now();
let missed = 0;

function bridge(query: string, path: string): string | undefined {
  const nouns = new Set(
    path
      .split(/[/{}?&=.]+/)
      .filter(Boolean)
      .flatMap((s) => stems(s)),
  );
  const kept = words(query, false).filter((w) => !nouns.has(stem(w)));
  return stems(kept.join(' ')).length >= 2 && kept.length < words(query, false).length ? kept.join(' ') : undefined;
}

for (let start = 0; start < corpus.length; start += BATCH) {
  const batch = corpus.slice(start, start + BATCH);
  for (const view of ['summary', 'description'] as const) {
    const query = (fn: CorpusApp['functions'][number]) =>
      view === 'summary' ? fn.summary : fn.details && firstSentence(fn.details);
    // The query's field leaves every document: the description keeps only the other field.
    const catalogue: Catalogue = {
      apps: batch.map((app) => ({ text: app.text, visible: true })),
      functions: batch.flatMap((app) =>
        app.functions.map((fn) => ({
          text: { ...fn.text, description: (view === 'summary' ? fn.details : fn.summary) || fn.operation },
          visible: true,
          operation: fn.operation,
        })),
      ),
    };
    const indexed = new Indexed(catalogue, wordnet, vectors);
    for (const app of batch) {
      const chosen = app.functions
        .filter((fn) => query(fn) && stems(query(fn)).length > 0)
        .sort((a, b) => (hash(view + a.text.name) < hash(view + b.text.name) ? -1 : 1))
        .slice(0, PER_APP);
      for (const fn of chosen) {
        const literal = query(fn);
        const variants: [Group['variant'], string | undefined][] = [
          ['literal', literal],
          ['bridge', bridge(literal, fn.operation.split(' ')[1])],
        ];
        for (const [variant, q] of variants) {
          if (!q) continue;
          const candidates = indexed.candidates(q, app.text.name, K);
          const label = candidates.findIndex((c) => c.name === fn.text.name);
          if (label < 0) {
            missed++;
            continue;
          }
          groups.push({
            view,
            variant,
            app: app.text.name,
            query: q,
            label,
            candidates: candidates.map((c) => c.features),
          });
        }
      }
    }
  }
  console.error(
    `${start + batch.length}/${corpus.length} documents, ${groups.length} lists, ${missed} targets outside the top ${K}, ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}
writeFileSync(OUT, JSON.stringify(groups));
