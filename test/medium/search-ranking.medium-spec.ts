import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogService } from '../../src/catalog/catalog.service.js';
import { SearchIndexService } from '../../src/search/search-index.service.js';
import { ACI_CATALOG as ACI, ACI_EVAL as EVAL, ACI_PRESENT, needsAci } from '../helpers/shared-data.js';
import { TestApp } from '../helpers/test-app.js';

interface EvalLine {
  intent: string;
  expected: string[];
}

const readLines = (path: string): EvalLine[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as EvalLine);

/** Ranking sanity on the real ACI catalogue (98 apps, 987 functions) with the default offline embeddings. */
describe.skipIf(!ACI_PRESENT)(needsAci('search ranking on the ACI catalogue'), () => {
  let app: TestApp;
  let search: SearchIndexService;
  const base = { projectId: '00000000-0000-0000-0000-000000000000', configuredOnly: false, offset: 0 };

  beforeAll(async () => {
    app = await TestApp.start();
    const report = await app.app.get(CatalogService).importPaths([ACI], { secrets: {} });
    expect(report.problems).toEqual([]);
    search = app.app.get(SearchIndexService);
  });

  afterAll(() => app.close());

  it('indexes every app and function with an embedding of the configured model', async () => {
    const rows: { kind: string; documents: number; embedded: number }[] = await app.dataSource.query(
      `SELECT d.kind, count(*)::int AS documents, count(e.name)::int AS embedded
         FROM search_documents d LEFT JOIN search_embeddings e ON e.kind = d.kind AND e.name = d.name AND e.model = $1
        GROUP BY d.kind ORDER BY d.kind`,
      [search.embeddingModel],
    );
    expect(rows).toEqual([
      { kind: 'app', documents: 98, embedded: 98 },
      { kind: 'function', documents: 987, embedded: 987 },
    ]);
  });

  it(
    'ranks each function first for its own description and app, nearly always, and never below third',
    { timeout: 120_000 },
    async () => {
      const functions: { name: string; description: string; display_name: string }[] = await app.dataSource.query(
        `SELECT f.name, f.description, a.display_name FROM functions f JOIN apps a ON a.name = f.app_name`,
      );
      let first = 0;
      const missed: string[] = [];
      for (const fn of functions) {
        const hits = await search.searchFunctions({
          ...base,
          intent: `${fn.description} in ${fn.display_name}`,
          limit: 3,
        });
        const names = (hits ?? []).map((hit) => hit.name);
        if (names[0] === fn.name) {
          first++;
        }
        if (!names.includes(fn.name)) {
          missed.push(fn.name);
        }
      }
      expect(missed).toEqual([]);
      expect(first / functions.length).toBeGreaterThan(0.95);
    },
  );

  it('keeps the quality measured on the dev sets (a regression guard; npm run eval:search reports it)', async () => {
    const measure = async (kind: 'functions' | 'apps') => {
      const lines = readLines(`${EVAL}/${kind}-dev.jsonl`);
      let top5 = 0;
      let reciprocal = 0;
      for (const line of lines) {
        const hits =
          kind === 'functions'
            ? await search.searchFunctions({ ...base, intent: line.intent, limit: 100 })
            : await search.searchApps({ ...base, intent: line.intent, limit: 100 });
        const rank = (hits ?? []).findIndex((hit) => line.expected.includes(hit.name));
        top5 += rank >= 0 && rank < 5 ? 1 : 0;
        reciprocal += rank >= 0 ? 1 / (rank + 1) : 0;
      }
      return { recall5: top5 / lines.length, mrr: reciprocal / lines.length };
    };

    const functions = await measure('functions');
    const apps = await measure('apps');

    // A floor a little under what npm run eval:search reports for the default (chosen by
    // cross-validation, not to pass this line).
    expect(functions.recall5).toBeGreaterThanOrEqual(0.87);
    expect(functions.mrr).toBeGreaterThanOrEqual(0.77);
    expect(apps.recall5).toBeGreaterThanOrEqual(0.95);
  });
});
