// Learning-to-rank: the features of (intent, candidate) pairs for the default ranking's top K.
// A catalogue is indexed exactly as the service indexes it (src/search), plus one BM25 index per
// field; the engine's private scoring is reached from here (lab only) for the first-stage scores.
import {
  analyseFields,
  appDocument,
  DEFAULT_ENGINE_OPTIONS,
  functionDocument,
  type AppText,
  type FunctionText,
  SEARCH_FIELDS,
  SEMANTIC_EMBEDDING_DEFAULTS,
  SearchEngine,
  SemanticEmbeddingProvider,
  TermDictionary,
  type WordNet,
  type WordVectors,
} from '../../src/search/index.js';
import { LexicalIndex, type PackedTerms, type QueryTerm, termSource } from '../../src/search/lexical-index.js';
import { ACTION_CLASSES } from '../../src/search/query-expansion.js';
import { stem, stems, words } from '../../src/search/text-analysis.js';
import { topByScore } from '../../src/search/vector-index.js';

export interface Catalogue {
  apps: { text: AppText; visible: boolean }[];
  functions: { text: FunctionText; visible: boolean; operation?: string }[];
}

export interface Candidate {
  name: string;
  /** First-stage (default ranking) score. */
  s1: number;
  features: number[];
}

const DOC_ACTIONS = ['list', 'get', 'create', 'update', 'delete'] as const;
const CLASS_OF_STEM = new Map<string, number[]>();
ACTION_CLASSES.forEach((members, index) => {
  for (const member of members) {
    const s = stem(member);
    CLASS_OF_STEM.set(s, [...new Set([...(CLASS_OF_STEM.get(s) ?? []), index])]);
  }
});
const QUERY_STATES = ACTION_CLASSES.length + 1;

export const FEATURE_NAMES: string[] = [
  's1',
  'rr',
  ...SEARCH_FIELDS.map((f) => `bm25 ${f}`),
  'cos',
  'cos-max',
  'cover any',
  'cover name',
  'cover operation',
  'cover description',
  'cover expanded',
  'last segment',
  'segments matched',
  'path params',
  'depth',
  'plural noun on collection',
  'singular noun on item',
  'name precision',
  ...Array.from({ length: QUERY_STATES }, (_, q) =>
    DOC_ACTIONS.map((a) => `${q < ACTION_CLASSES.length ? ACTION_CLASSES[q][0] : 'none'}x${a}`),
  ).flat(),
];

interface DocInfo {
  action: number;
  literal: string[];
  params: number;
  name: Set<string>;
  fields: Set<string>[];
  all: Set<string>;
}

function docInfo(fn: FunctionText, terms: Record<string, string[]>): DocInfo {
  const p = fn.protocol_data as { method?: string; path?: string } | undefined;
  const method = (p?.method ?? '').toUpperCase();
  const segments = (p?.path ?? '').split(/[/?&=.]+/).filter(Boolean);
  const item = /^\{.*\}$/.test(segments[segments.length - 1] ?? '');
  const action = { GET: item ? 1 : 0, POST: 2, PUT: 3, PATCH: 3, DELETE: 4 }[method] ?? -1;
  const literal = segments.filter((s) => !s.startsWith('{')).flatMap((s) => stems(s));
  const fields = SEARCH_FIELDS.map((f) => new Set(terms[f]));
  return {
    action,
    literal,
    params: segments.filter((s) => s.startsWith('{')).length,
    name: fields[0],
    fields,
    all: new Set(['name', 'description', 'operation', 'params', 'tags'].flatMap((f) => terms[f])),
  };
}

/** One catalogue indexed for the default ranking, with what the features need. */
export class Indexed {
  readonly engine: SearchEngine;
  private readonly names: string[];
  private readonly info: DocInfo[];
  private readonly fieldIndexes: LexicalIndex[];
  private readonly embeddings: Float32Array[];
  private readonly provider: SemanticEmbeddingProvider;
  private readonly dictionary = new TermDictionary();

  constructor(
    catalogue: Catalogue,
    wordnet: WordNet,
    vectors: WordVectors,
    private readonly embedCache: Map<string, Float32Array> = new Map(),
  ) {
    this.provider = new SemanticEmbeddingProvider(vectors, wordnet, SEMANTIC_EMBEDDING_DEFAULTS);
    const apps = new Map(catalogue.apps.map((a) => [a.text.name, a.text]));
    const fns = [...catalogue.functions].sort((a, b) => (a.text.name < b.text.name ? -1 : 1));
    this.names = fns.map((f) => f.text.name);
    const appDocs = catalogue.apps.map((app) => ({
      app,
      doc: appDocumentOf(
        app.text,
        catalogue.functions.filter((f) => f.text.app_name === app.text.name),
      ),
    }));
    const fnDocs = fns.map((f) => functionDocument(f.text, apps.get(f.text.app_name)!));
    const fnTerms = fnDocs.map((d) => analyseFields(d.fields));
    this.info = fns.map((f, i) => docInfo(f.text, fnTerms[i]));
    const pack = (t: Record<string, string[]>): PackedTerms =>
      this.dictionary.pack(SEARCH_FIELDS.map((field) => t[field]));
    const fnPacked = fnTerms.map(pack);
    this.embeddings = fnDocs.map((d) => this.embed(d.embedding_text));
    this.engine = SearchEngine.fromItems(
      appDocs.map(({ app, doc }) => ({
        name: app.text.name,
        description: app.text.description,
        categories: app.text.categories,
        visible: app.visible,
        terms: pack(analyseFields(doc.fields)),
        embedding: this.embed(doc.embedding_text),
      })),
      fns.map((f, i) => ({
        name: f.text.name,
        app_name: f.text.app_name,
        description: f.text.description,
        visible: f.visible,
        terms: fnPacked[i],
        embedding: this.embeddings[i],
      })),
      this.dictionary,
      { ...DEFAULT_ENGINE_OPTIONS, minSimilarity: 0.12, wordnet },
    );
    const source = termSource(fnPacked);
    this.fieldIndexes = SEARCH_FIELDS.map(
      (field) =>
        new LexicalIndex(source, SEARCH_FIELDS, {
          k1: 1.2,
          weights: { [field]: 1 },
          b: DEFAULT_ENGINE_OPTIONS.functionFields.b,
        }),
    );
  }

  embed(text: string): Float32Array {
    let v = this.embedCache.get(text);
    if (!v) {
      v = this.provider.embed(text);
      this.embedCache.set(text, v);
    }
    return v;
  }

  /** The default ranking's first `k` functions for the intent (in `app` when given), with their features. */
  candidates(intent: string, app: string | undefined, k: number): Candidate[] {
    const engine = this.engine as unknown as {
      allowedFunctions(filter: object): Uint8Array;
      scoreFunctions(request: object, allowed: Uint8Array): { values: Float32Array; ids: number[] };
      query(intent: string): QueryTerm[];
    };
    const allowed = engine.allowedFunctions(app ? { appNames: [app] } : {});
    const vector = this.embed(intent);
    const scores = engine.scoreFunctions({ intent, vector, offset: 0, limit: k }, allowed);
    const positive = scores.ids.filter((id) => allowed[id] && scores.values[id] > 0);
    const ids = topByScore(positive, scores.values, k);
    for (let id = 0; id < allowed.length && ids.length < k; id++) {
      if (allowed[id] && !(scores.values[id] > 0)) ids.push(id);
    }
    const query = engine.query(intent);
    const mask = new Uint8Array(allowed.length);
    for (const id of ids) mask[id] = 1;
    const fieldScores = this.fieldIndexes.map((index) => {
      const values = new Float32Array(allowed.length);
      index.score(query, values, mask);
      let max = 0;
      for (const id of ids) max = Math.max(max, values[id]);
      return ids.map((id) => (max > 0 ? values[id] / max : 0));
    });
    const typed = [...new Set(stems(intent))];
    const expanded = new Map<string, number>();
    for (const t of query) expanded.set(this.dictionary.term(t.term), t.weight);
    const typedSet = new Set(typed);
    const states = new Set<number>();
    for (const w of words(intent, false)) for (const c of CLASS_OF_STEM.get(stem(w)) ?? []) states.add(c);
    if (states.size === 0) states.add(ACTION_CLASSES.length);
    const plural = new Set(
      words(intent)
        .filter((w) => w.length > 3 && w.endsWith('s') && !w.endsWith('ss'))
        .map(stem),
    );
    const singular = new Set(
      words(intent)
        .filter((w) => !(w.endsWith('s') && !w.endsWith('ss')))
        .map(stem),
    );
    const cosines = ids.map((id) => dot(vector, this.embeddings[id]));
    const maxCos = Math.max(...cosines, 0);
    const top = ids.length ? scores.values[ids[0]] || 1 : 1;
    const cover = (set: Set<string>) => (typed.length ? typed.filter((t) => set.has(t)).length / typed.length : 0);
    return ids.map((id, rank) => {
      const d = this.info[id];
      let wSum = 0;
      let wHit = 0;
      for (const [term, weight] of expanded) {
        wSum += weight;
        if (d.all.has(term)) wHit += weight;
      }
      const last = d.literal[d.literal.length - 1];
      const segHits = d.literal.filter((s) => typedSet.has(s)).length;
      const f: number[] = [
        (scores.values[id] ?? 0) / top,
        1 / (rank + 1),
        ...fieldScores.map((s) => s[rank]),
        cosines[rank],
        cosines[rank] - maxCos,
        cover(d.all),
        cover(d.fields[0]),
        cover(d.fields[6]),
        cover(d.fields[3]),
        wSum ? wHit / wSum : 0,
        last !== undefined && typedSet.has(last) ? 1 : 0,
        d.literal.length ? segHits / d.literal.length : 0,
        Math.min(d.params, 3) / 3,
        Math.min(d.literal.length, 5) / 5,
        d.action === 0 && d.literal.some((s) => plural.has(s)) ? 1 : 0,
        d.action === 1 && d.literal.some((s) => singular.has(s)) ? 1 : 0,
        d.name.size ? [...d.name].filter((t) => typedSet.has(t) || expanded.has(t)).length / d.name.size : 0,
      ];
      const cross = new Array<number>(QUERY_STATES * DOC_ACTIONS.length).fill(0);
      if (d.action >= 0) for (const q of states) cross[q * DOC_ACTIONS.length + d.action] = 1;
      f.push(...cross);
      return { name: this.names[id], s1: scores.values[id] ?? 0, features: f.map((x) => Math.round(x * 1e4) / 1e4) };
    });
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

function appDocumentOf(app: AppText, functions: { text: FunctionText }[]) {
  return appDocument(
    app,
    functions.map((f) => f.text),
  );
}
