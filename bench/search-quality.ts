/**
 * Search quality in process, through the search module's public entry point (src/search/index.ts):
 * catalogues are analysed, embedded and ranked exactly as the service does, and every setting of a
 * small grid is scored on every line of the evaluation sets:
 *
 * - functions-dev / functions-users and apps-dev / apps-users over the ACI catalogue (../shared);
 * - within-app: intents over 22 apps imported from APIs.guru documents (bench/within-app), ranked
 *   with the intent's app given (`app_names`), as an agent searches inside an app it picked.
 *
 * Settings are chosen by k-fold cross-validation over all these lines together (each set's lines
 * dealt round-robin into the folds): for each fold, the setting with the best objective on the other
 * folds is scored on it. The objective is the mean, over the sets, of MRR plus recall@5 (recall@1
 * for within-app, its target). Figures are reported per set, in-sample (the best setting on all
 * lines) and cross-validated. The baselines are fixed settings of the same engine: plain BM25 (one
 * field of name, app, tags and description, words as typed, no app context), lexical only (the
 * default without vectors) and vector only (the similarity alone).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadOpenApiDocument, mapOpenApiDocument } from '../src/catalog/index.js';
import {
  analyseFields,
  appDocument,
  type AppText,
  DEFAULT_ENGINE_OPTIONS,
  DEFAULT_EXPANSION,
  type EngineOptions,
  functionDocument,
  type FunctionText,
  loadWordVectors,
  OfflineEmbeddingProvider,
  SEARCH_FIELDS,
  SEMANTIC_EMBEDDING_DEFAULTS,
  SearchEngine,
  SemanticEmbeddingProvider,
  TermDictionary,
  WordNet,
  type WordVectors,
} from '../src/search/index.js';
import { type EvalLine, readJsonl, ROOT, SHARED } from './support.js';

export const FOLDS = 5;

export const SETS = ['functions-dev', 'functions-users', 'apps-dev', 'apps-users', 'within-app'] as const;
export type SetName = (typeof SETS)[number];

export interface Setting {
  label: string;
  /** Share of the vector's cosine from the word vectors (0: hashed features only); undefined: no vectors. */
  semanticShare?: number;
  engine: Partial<EngineOptions>;
}

interface CatalogueApp {
  text: AppText;
  visible: boolean;
}
interface CatalogueFunction {
  text: FunctionText;
  visible: boolean;
  /** `METHOD path` of an imported operation. */
  operation?: string;
}
interface Catalogue {
  apps: CatalogueApp[];
  functions: CatalogueFunction[];
  /** Imported: the app name of each document (by file name without .json). */
  appOfFile?: Map<string, string>;
}

interface Line extends EvalLine {
  app?: string;
}

export function readAciCatalogue(dir: string): Catalogue {
  const out: Catalogue = { apps: [], functions: [] };
  for (const folder of readdirSync(dir, { withFileTypes: true })) {
    if (!folder.isDirectory()) {
      continue;
    }
    const read = (file: string) => JSON.parse(readFileSync(join(dir, folder.name, file), 'utf8')) as unknown;
    const app = read('app.json') as AppText & { visibility: string; active: boolean };
    const visible = app.visibility === 'public' && app.active;
    out.apps.push({ text: app, visible });
    for (const fn of read('functions.json') as (FunctionText & { visibility: string; active: boolean })[]) {
      out.functions.push({
        text: { ...fn, app_name: app.name },
        visible: visible && fn.visibility === 'public' && fn.active,
      });
    }
  }
  return out;
}

const WITHIN_APP = join(ROOT, 'bench', 'within-app');

/** The trimmed APIs.guru documents, mapped as `catalog import-openapi` maps them; app names are the file names. */
export async function readOpenApiCatalogue(): Promise<Catalogue> {
  const out: Catalogue = { apps: [], functions: [], appOfFile: new Map() };
  const dir = join(WITHIN_APP, 'openapi');
  for (const file of readdirSync(dir).sort()) {
    const { document } = await loadOpenApiDocument(join(dir, file));
    const mapping = mapOpenApiDocument(document, { server: 'https://api.example.com' });
    out.appOfFile?.set(file.replace(/\.json$/, ''), mapping.app.name);
    out.apps.push({ text: mapping.app, visible: true });
    for (const fn of mapping.functions) {
      const { method, path } = fn.protocol_data as { method: string; path: string };
      out.functions.push({
        text: { ...fn, app_name: mapping.app.name },
        visible: true,
        operation: `${method} ${path}`,
      });
    }
  }
  return out;
}

/** Within-app lines name the app by file and the expected functions by operation: resolved to names here. */
export function withinAppLines(catalogue: Catalogue): Line[] {
  const raw = readFileSync(join(WITHIN_APP, 'intents.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as { app: string; intent: string; expected: string[] });
  return raw.map((line) => {
    const app = catalogue.appOfFile?.get(line.app) ?? line.app;
    const expected = line.expected.map((operation) => {
      const fn = catalogue.functions.find((f) => f.text.app_name === app && f.operation === operation);
      if (!fn) {
        throw new Error(`within-app: no operation ${operation} in ${app}`);
      }
      return fn.text.name;
    });
    return { intent: line.intent, expected, kind: 'task', app };
  });
}

/** A catalogue analysed once: documents, term ids, and embeddings per word-vector share. */
class Prepared {
  private readonly dictionary = new TermDictionary();
  private readonly appDocs;
  private readonly functionDocs;
  private readonly appTerms;
  private readonly functionTerms;
  private readonly embeddings = new Map<number, { apps: Float32Array[]; functions: Float32Array[] }>();
  private readonly engines = new Map<string, SearchEngine>();

  constructor(
    private readonly catalogue: Catalogue,
    private readonly wordnet: WordNet | undefined,
    private readonly vectors: WordVectors | undefined,
  ) {
    const apps = new Map(catalogue.apps.map((app) => [app.text.name, app.text]));
    this.appDocs = catalogue.apps.map((app) =>
      appDocument(
        app.text,
        catalogue.functions.filter((fn) => fn.text.app_name === app.text.name).map((fn) => fn.text),
      ),
    );
    this.functionDocs = catalogue.functions.map((fn) => functionDocument(fn.text, apps.get(fn.text.app_name)!));
    const pack = (fields: Parameters<typeof analyseFields>[0]) => {
      const terms = analyseFields(fields);
      return this.dictionary.pack(SEARCH_FIELDS.map((field) => terms[field]));
    };
    this.appTerms = this.appDocs.map((doc) => pack(doc.fields));
    this.functionTerms = this.functionDocs.map((doc) => pack(doc.fields));
  }

  provider(share: number) {
    return this.vectors && share > 0
      ? new SemanticEmbeddingProvider(this.vectors, this.wordnet, {
          ...SEMANTIC_EMBEDDING_DEFAULTS,
          semanticShare: share,
        })
      : new OfflineEmbeddingProvider(this.wordnet);
  }

  private embedded(share: number) {
    let out = this.embeddings.get(share);
    if (!out) {
      const provider = this.provider(share);
      const embed = (text: string) => provider.embed(text);
      out = {
        apps: this.appDocs.map((doc) => embed(doc.embedding_text)),
        functions: this.functionDocs.map((doc) => embed(doc.embedding_text)),
      };
      this.embeddings.set(share, out);
    }
    return out;
  }

  engine(setting: Setting): SearchEngine {
    let engine = this.engines.get(setting.label);
    if (!engine) {
      const vectors = setting.semanticShare === undefined ? undefined : this.embedded(setting.semanticShare);
      engine = SearchEngine.fromItems(
        this.catalogue.apps.map((app, i) => ({
          name: app.text.name,
          description: app.text.description,
          categories: app.text.categories,
          visible: app.visible,
          terms: this.appTerms[i],
          embedding: vectors?.apps[i],
        })),
        this.catalogue.functions.map((fn, i) => ({
          name: fn.text.name,
          app_name: fn.text.app_name,
          description: fn.text.description,
          visible: fn.visible,
          terms: this.functionTerms[i],
          embedding: vectors?.functions[i],
        })),
        this.dictionary,
        { ...DEFAULT_ENGINE_OPTIONS, minSimilarity: 0.12, wordnet: this.wordnet, ...setting.engine },
      );
      // Only the last engine is kept: a tuner tries thousands of settings, each scored once.
      this.engines.clear();
      this.engines.set(setting.label, engine);
    }
    return engine;
  }

  /** Reciprocal rank of the first expected item among the first 10 (0 when absent). */
  rank(setting: Setting, line: Line, kind: 'apps' | 'functions'): number {
    const hits = this.hits(setting, line, kind, 10);
    const at = hits.findIndex((hit) => line.expected.includes(hit.name));
    return at >= 0 ? 1 / (at + 1) : 0;
  }

  hits(setting: Setting, line: Line, kind: 'apps' | 'functions', limit: number) {
    const engine = this.engine(setting);
    const vector =
      setting.semanticShare === undefined ? undefined : this.embedQuery(setting.semanticShare, line.intent);
    const request = { intent: line.intent, vector, offset: 0, limit };
    return kind === 'apps'
      ? engine.rankApps(request, {})
      : engine.rankFunctions(request, line.app ? { appNames: [line.app] } : {});
  }

  /** The texts of the catalogue's items by name (lab tools). */
  texts(): Map<string, { text: AppText | FunctionText; operation?: string }> {
    return new Map<string, { text: AppText | FunctionText; operation?: string }>([
      ...this.catalogue.apps.map((app) => [app.text.name, { text: app.text }] as const),
      ...this.catalogue.functions.map((fn) => [fn.text.name, { text: fn.text, operation: fn.operation }] as const),
    ]);
  }

  private readonly queries = new Map<string, Float32Array>();

  private embedQuery(share: number, intent: string): Float32Array {
    const key = `${share}|${intent}`;
    let vector = this.queries.get(key);
    if (!vector) {
      vector = this.provider(share).embed(intent);
      this.queries.set(key, vector);
    }
    return vector;
  }
}

export type Ranks = Record<SetName, number[]>;

export interface Evaluator {
  lines: Record<SetName, Line[]>;
  ranks(setting: Setting): Ranks;
  hasWordVectors: boolean;
  /** The first `limit` hits of a line (lab tools). */
  hits(setting: Setting, set: SetName, line: number, limit: number): { name: string; description: string }[];
  texts(set: SetName): Map<string, { text: AppText | FunctionText; operation?: string }>;
  vectors?: WordVectors;
}

/** `vectors`: the word vectors to use instead of the shipped ones (null: none). */
export async function createEvaluator(options: { vectors?: WordVectors | null } = {}): Promise<Evaluator> {
  const wordnet = WordNet.open();
  const vectors = options.vectors === undefined ? loadWordVectors() : (options.vectors ?? undefined);
  const aci = new Prepared(readAciCatalogue(join(SHARED, 'catalogs', 'aci')), wordnet, vectors);
  const imported = await readOpenApiCatalogue();
  const within = new Prepared(imported, wordnet, vectors);
  const read = (name: string) => readJsonl(join(SHARED, 'eval', `${name}.jsonl`)) as Line[];
  const lines: Record<SetName, Line[]> = {
    'functions-dev': read('functions-dev'),
    'functions-users': read('functions-users'),
    'apps-dev': read('apps-dev'),
    'apps-users': read('apps-users'),
    'within-app': withinAppLines(imported),
  };
  const cache = new Map<string, Ranks>();
  return {
    lines,
    hasWordVectors: vectors !== undefined,
    vectors,
    hits: (setting, set, line, limit) =>
      (set === 'within-app' ? within : aci).hits(
        setting,
        lines[set][line],
        set.startsWith('apps') ? 'apps' : 'functions',
        limit,
      ),
    texts: (set) => (set === 'within-app' ? within : aci).texts(),
    ranks(setting) {
      let out = cache.get(setting.label);
      if (!out) {
        out = {
          'functions-dev': lines['functions-dev'].map((line) => aci.rank(setting, line, 'functions')),
          'functions-users': lines['functions-users'].map((line) => aci.rank(setting, line, 'functions')),
          'apps-dev': lines['apps-dev'].map((line) => aci.rank(setting, line, 'apps')),
          'apps-users': lines['apps-users'].map((line) => aci.rank(setting, line, 'apps')),
          'within-app': lines['within-app'].map((line) => within.rank(setting, line, 'functions')),
        };
        cache.set(setting.label, out);
      }
      return out;
    },
  };
}

export interface Figures {
  recall1: number;
  recall5: number;
  mrr: number;
}

export function figures(rr: number[]): Figures {
  const n = rr.length || 1;
  return {
    recall1: rr.filter((value) => value === 1).length / n,
    recall5: rr.filter((value) => value >= 1 / 5).length / n,
    mrr: rr.reduce((sum, value) => sum + value, 0) / n,
  };
}

const fold = (index: number) => index % FOLDS;

/** Mean over the sets of MRR + recall@5 (within-app: MRR + recall@1) on the lines `keep` admits. */
function objective(ranks: Ranks, keep: (line: number) => boolean): number {
  let total = 0;
  for (const set of SETS) {
    const rr = ranks[set].filter((_, line) => keep(line));
    const m = figures(rr);
    total += m.mrr + (set === 'within-app' ? m.recall1 : m.recall5);
  }
  return total / SETS.length;
}

export interface CrossValidated {
  /** Reciprocal ranks of each line when its fold was held out. */
  heldOut: Ranks;
  chosen: Setting[];
  best: Setting;
  bestRanks: Ranks;
}

export function crossValidate(settings: Setting[], evaluator: Evaluator): CrossValidated {
  const all = new Map(settings.map((setting) => [setting, evaluator.ranks(setting)]));
  const pick = (keep: (line: number) => boolean) =>
    settings.reduce((best, setting) =>
      objective(all.get(setting)!, keep) > objective(all.get(best)!, keep) ? setting : best,
    );
  const heldOut = Object.fromEntries(SETS.map((set) => [set, new Array<number>(evaluator.lines[set].length)])) as Ranks;
  const chosen: Setting[] = [];
  for (let k = 0; k < FOLDS; k++) {
    const setting = pick((line) => fold(line) !== k);
    chosen.push(setting);
    const ranks = all.get(setting)!;
    for (const set of SETS) {
      ranks[set].forEach((value, line) => fold(line) === k && (heldOut[set][line] = value));
    }
  }
  const best = pick(() => true);
  return { heldOut, chosen, best, bestRanks: all.get(best)! };
}

/** The shipped ranking's settings: what DEFAULT_ENGINE_OPTIONS and the offline provider do. */
export const DEFAULT_SETTING: Setting = {
  label: 'default',
  semanticShare: SEMANTIC_EMBEDDING_DEFAULTS.semanticShare,
  engine: {},
};

/** The grid the default is chosen from, and the baselines (fixed settings). */
export function grid(): Record<string, Setting[]> {
  const hybrid: Setting[] = [DEFAULT_SETTING];
  const functionFields = DEFAULT_ENGINE_OPTIONS.functionFields;
  for (const vectorWeight of [0.25, 0.4]) {
    for (const action of [0, 0.35, 0.5, 0.75, 1]) {
      for (const operation of [0, 0.5, 1, 2]) {
        hybrid.push({
          label: `vector weight ${vectorWeight}, action ${action}, operation ${operation}`,
          semanticShare: SEMANTIC_EMBEDDING_DEFAULTS.semanticShare,
          engine: {
            vectorWeight,
            expansion: { ...DEFAULT_EXPANSION, action },
            functionFields: { ...functionFields, weights: { ...functionFields.weights, operation } },
          },
        });
      }
    }
  }
  const plain = {
    k1: 1.2,
    weights: { name: 1, app: 1, tags: 1, description: 1 },
    b: { name: 0.75, app: 0.75, tags: 0.75, description: 0.75 },
  };
  return {
    hybrid,
    'plain BM25': [
      {
        label: 'plain BM25',
        engine: { functionFields: plain, appFields: plain, appContext: 0, expansion: undefined },
      },
    ],
    'lexical only': [{ label: 'lexical only', engine: {} }],
    'vector only': [
      {
        label: 'vector only',
        semanticShare: SEMANTIC_EMBEDDING_DEFAULTS.semanticShare,
        engine: { lexicalWeight: 0, vectorWeight: 1 },
      },
    ],
  };
}
