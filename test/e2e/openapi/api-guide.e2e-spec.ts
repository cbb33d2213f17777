import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface Operation {
  operationId: string;
  tags: string[];
}

/** docs/api.md lists every operation of the committed document, linked to its entry in /v1/docs. */
describe('the API guide', () => {
  const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as {
    paths: Record<string, Record<string, Operation>>;
  };
  // Table cells padded by the formatter count as single spaces.
  const guide = readFileSync('docs/api.md', 'utf8').replace(/ {2,}/g, ' ');
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), ...operation })),
  );

  it('has a row for every operation of openapi.json, linked to /v1/docs (add one when adding an operation)', () => {
    expect(operations.length).toBeGreaterThan(30);
    for (const operation of operations) {
      expect(guide, operation.operationId).toContain(
        `| [\`${operation.operationId}\`](http://127.0.0.1:8000/v1/docs#/${operation.tags[0]}/${operation.operationId}) | \`${operation.method} ${operation.path}\` |`,
      );
    }
  });

  it('lists no operation that the document does not have', () => {
    const ids = new Set(operations.map((operation) => operation.operationId));
    const listed = [...guide.matchAll(/\/v1\/docs#\/[\w-]+\/(\w+)\)/g)].map((match) => match[1]);
    expect(listed.filter((id) => !ids.has(id))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
  });
});
