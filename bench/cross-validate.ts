/**
 * Cross-validated search quality, in process: the ACI catalogue is analysed and embedded exactly as
 * the service does (search-document.ts, the embedding providers, SearchEngine), and every setting of
 * a small grid is scored on every dev intent. For each of k folds the setting with the best mean MRR
 * and recall@5 (functions and apps) on the other k−1 folds is chosen and scored on the held-out fold; the
 * held-out scores of all folds together are the cross-validated figures. A setting that only fits
 * the intents it was chosen on shows up as a gap between the in-sample and the cross-validated line.
 *
 * Run alone (`node dist/bench/cross-validate.js`) it prints the grid's winner per fold as well.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HASHED_EMBEDDING_DEFAULTS, hashedEmbedding } from '../src/search/embeddings/hashed-embedding.js';
import {
  SEMANTIC_EMBEDDING_DEFAULTS,
  type SemanticEmbeddingOptions,
} from '../src/search/embeddings/semantic-embedding.provider.js';
import {
  fieldSentenceVector,
  loadWordVectors,
  sentenceVector,
  type WordVectors,
} from '../src/search/embeddings/word-vectors.js';
import { firstWords } from '../src/search/embeddings/encoder-embedding.provider.js';
import { loadSentenceEncoder, sentenceEncoderSource } from '../src/search/embeddings/sentence-encoder.js';
import { TermDictionary } from '../src/search/lexical-index.js';
import {
  analyseFields,
  type AppText,
  appDocument,
  functionDocument,
  functionLocalName,
  type FunctionText,
  parameterNames,
  SEARCH_FIELDS,
  type SearchDocument,
  type SearchField,
} from '../src/search/search-document.js';
import {
  DEFAULT_ENGINE_OPTIONS,
  type EngineOptions,
  type RankingMode,
  SearchEngine,
} from '../src/search/search-engine.js';
import { WordNet } from '../src/search/wordnet.js';
import { NO_NEIGHBOURS, type NeighbourOptions } from '../src/search/word-neighbours.js';
import { type EvalLine, readJsonl, SHARED } from './support.js';

export const FOLDS = 5;

export interface Setting {
  label: string;
  mode: RankingMode;
  embedding: SemanticEmbeddingOptions;
  vectorWeight: number;
  /** Query expansion by word-vector neighbours; absent: none. */
  neighbours?: NeighbourOptions;
  /** Absent: score fusion. */
  fusion?: 'score' | 'rrf' | 'zscore';
  /**
   * Field-aware sentence vectors: the word-vector part of a document's vector is the weighted sum of
   * one sentence vector per field (name, description, parameter names; for an app: name, description
   * and categories, function names) instead of one vector of the concatenated text. Absent: one vector.
   */
  fieldVectors?: FieldVectorWeights;
  /** Which documents get field-aware vectors; absent: both. */
  fieldVectorKinds?: 'both' | 'apps';
  /** BM25F field weights of functions, over the defaults; absent: the defaults. */
  functionWeights?: Partial<Record<SearchField, number>>;
  /** BM25F field weights of apps, over the defaults; absent: the defaults. */
  appWeights?: Partial<Record<SearchField, number>>;
  /** Share of an app's vector similarity its functions get; absent: 0. */
  appVectorContext?: number;
  /** BM25F's IDF raised to this power; absent: 1. */
  idfExponent?: number;
  /**
   * The sentence encoder's vector beside the offline one: `share` of the cosine comes from it (1: the
   * encoder's vector alone). Absent: no encoder.
   */
  encoder?: { share: number; words?: number };
  /** The vector side's similarity floor; absent: the offline embedding's 0.12. */
  minSimilarity?: number;
}

/** Weights of the name, description and parameter-name sentence vectors (see `Setting.fieldVectors`). */
export type FieldVectorWeights = readonly [name: number, description: number, params: number];

export interface Figures {
  recall1: number;
  recall5: number;
  mrr: number;
}

/** `fields`: the texts of the field-aware sentence vector (name, description, parameter names). */
interface Catalogue {
  apps: { text: AppText; visible: boolean; doc: SearchDocument; fields: string[] }[];
  functions: { text: FunctionText; visible: boolean; doc: SearchDocument; fields: string[] }[];
}

interface CatalogueFunction extends FunctionText {
  visibility: string;
  active: boolean;
}

function readCatalogue(dir: string): Catalogue {
  const apps: Catalogue['apps'] = [];
  const functions: Catalogue['functions'] = [];
  for (const folder of readdirSync(dir, { withFileTypes: true })) {
    if (!folder.isDirectory()) {
      continue;
    }
    const app = JSON.parse(readFileSync(join(dir, folder.name, 'app.json'), 'utf8')) as AppText & {
      visibility: string;
      active: boolean;
    };
    const fns = (JSON.parse(readFileSync(join(dir, folder.name, 'functions.json'), 'utf8')) as CatalogueFunction[]).map(
      (fn) => ({ ...fn, app_name: app.name }),
    );
    const appVisible = app.visibility === 'public' && app.active;
    apps.push({
      text: app,
      visible: appVisible,
      doc: appDocument(app, fns),
      fields: [
        `${app.name.replace(/_/g, ' ')} ${app.display_name}`,
        `${app.description} ${app.categories.join(' ')}`,
        fns
          .slice(0, 40)
          .map((fn) => functionLocalName(fn.name))
          .join(', '),
      ],
    });
    for (const fn of fns) {
      functions.push({
        text: fn,
        visible: appVisible && fn.visibility === 'public' && fn.active,
        doc: functionDocument(fn, app),
        fields: [
          `${app.display_name} ${functionLocalName(fn.name)}`,
          fn.description,
          parameterNames(fn.parameters).join(' '),
        ],
      });
    }
  }
  return { apps, functions };
}

/** Embeddings of a setting, cached per embedding option set (the engine options do not change them). */
class Embedder {
  private readonly hashed = new Map<string, Float32Array>();
  private readonly semantic = new Map<string, Float32Array>();

  constructor(
    private readonly vectors: WordVectors | undefined,
    private readonly wordnet: WordNet | undefined,
    private readonly encoded: Map<string, Float32Array> | undefined,
  ) {}

  /**
   * The offline vector, with the sentence encoder's beside it when the setting asks for it (of a
   * document's first `words` words when the setting says so; an intent's whole text).
   */
  embedWith(
    text: string,
    setting: Setting,
    fields?: { texts: string[]; weights: FieldVectorWeights },
    document = true,
  ): Float32Array {
    const offline = this.embed(text, setting.embedding, fields);
    if (!setting.encoder) {
      return offline;
    }
    const words = document ? setting.encoder.words : undefined;
    const encoded = this.encoded?.get(words ? firstWords(text, words) : text);
    if (!encoded) {
      throw new Error(`no sentence-encoder vector for ${JSON.stringify(text)}`);
    }
    const { share } = setting.encoder;
    if (share === 1) {
      return encoded;
    }
    const a = Math.sqrt(1 - share);
    const b = Math.sqrt(share);
    const out = new Float32Array(offline.length + encoded.length);
    offline.forEach((value, i) => (out[i] = a * value));
    encoded.forEach((value, i) => (out[offline.length + i] = b * value));
    return out;
  }

  embed(
    text: string,
    options: SemanticEmbeddingOptions,
    fields?: { texts: string[]; weights: FieldVectorWeights },
  ): Float32Array {
    let hashed = this.hashed.get(text);
    if (!hashed) {
      hashed = hashedEmbedding(text, HASHED_EMBEDDING_DEFAULTS, this.wordnet);
      this.hashed.set(text, hashed);
    }
    if (!this.vectors || options.semanticShare === 0) {
      return hashed;
    }
    const key = fields
      ? `${options.sifA}|${options.removeComponents}|${fields.weights.join()}|${fields.texts.join('\n')}`
      : `${options.sifA}|${options.removeComponents}|${text}`;
    let semantic = this.semantic.get(key);
    if (!semantic) {
      semantic = fields
        ? fieldSentenceVector(fields.texts, fields.weights, this.vectors, options)
        : sentenceVector(text, this.vectors, options);
      this.semantic.set(key, semantic);
    }
    if (options.semanticShare === 1) {
      return semantic;
    }
    const a = Math.sqrt(1 - options.semanticShare);
    const b = Math.sqrt(options.semanticShare);
    const out = new Float32Array(hashed.length + semantic.length);
    hashed.forEach((value, i) => (out[i] = a * value));
    semantic.forEach((value, i) => (out[hashed.length + i] = b * value));
    return out;
  }
}

export interface Evaluator {
  /** Reciprocal rank (0 when absent from the first 10) of each line, functions then apps. */
  reciprocalRanks(
    setting: Setting,
    fields?: Partial<Record<SearchField, number>>,
  ): { functions: number[]; apps: number[] };
  lines: { functions: EvalLine[]; apps: EvalLine[] };
  hasWordVectors: boolean;
  /** Id of the sentence encoder whose vectors the `encoder` settings use; undefined: none installed. */
  encoderId?: string;
}

export async function createEvaluator(): Promise<Evaluator> {
  const catalogue = readCatalogue(join(SHARED, 'catalogs', 'aci'));
  const wordnet = WordNet.open();
  const vectors = await loadWordVectors();
  const lines = {
    functions: readJsonl(join(SHARED, 'eval', 'functions-dev.jsonl')),
    apps: readJsonl(join(SHARED, 'eval', 'apps-dev.jsonl')),
  };
  const documents = [
    ...catalogue.apps.map((app) => app.doc.embedding_text),
    ...catalogue.functions.map((fn) => fn.doc.embedding_text),
  ];
  const encoder = await encodedTexts([
    ...documents,
    ...ENCODER_WORDS.flatMap((words) => documents.map((text) => firstWords(text, words))),
    ...lines.functions.map((line) => line.intent),
    ...lines.apps.map((line) => line.intent),
  ]);
  const embedder = new Embedder(vectors, wordnet, encoder?.vectors);
  const dictionary = new TermDictionary();
  const pack = (doc: SearchDocument) => {
    const terms = analyseFields(doc.fields);
    return dictionary.pack(SEARCH_FIELDS.map((field) => terms[field]));
  };
  const appTerms = catalogue.apps.map((app) => pack(app.doc));
  const functionTerms = catalogue.functions.map((fn) => pack(fn.doc));
  const rankOf = (names: string[], expected: string[]) => names.findIndex((name) => expected.includes(name));
  return {
    lines,
    hasWordVectors: vectors !== undefined,
    encoderId: encoder?.id,
    reciprocalRanks(setting, fields) {
      const embed = setting.mode === 'hybrid' || setting.mode === 'vector';
      const fieldTexts = (texts: string[], kind: 'apps' | 'functions') =>
        setting.fieldVectors && (kind === 'apps' || setting.fieldVectorKinds !== 'apps')
          ? { texts, weights: setting.fieldVectors }
          : undefined;
      const options: EngineOptions = {
        ...DEFAULT_ENGINE_OPTIONS,
        functionFields: {
          ...DEFAULT_ENGINE_OPTIONS.functionFields,
          weights: { ...DEFAULT_ENGINE_OPTIONS.functionFields.weights, ...setting.functionWeights, ...fields },
          idfExponent: setting.idfExponent,
        },
        appFields: {
          ...DEFAULT_ENGINE_OPTIONS.appFields,
          weights: { ...DEFAULT_ENGINE_OPTIONS.appFields.weights, ...setting.appWeights, ...fields },
          idfExponent: setting.idfExponent,
        },
        vectorWeight: setting.vectorWeight,
        fusion: setting.fusion ?? 'score',
        appVectorContext: setting.appVectorContext ?? 0,
        minSimilarity: setting.minSimilarity ?? 0.12,
        neighbours: setting.neighbours ?? NO_NEIGHBOURS,
        wordnet,
        wordVectors: vectors,
      };
      const engine = SearchEngine.fromItems(
        catalogue.apps.map((app, i) => ({
          name: app.text.name,
          description: app.text.description,
          categories: app.text.categories,
          visible: app.visible,
          terms: appTerms[i],
          embedding: embed
            ? embedder.embedWith(app.doc.embedding_text, setting, fieldTexts(app.fields, 'apps'))
            : undefined,
        })),
        catalogue.functions.map((fn, i) => ({
          name: fn.text.name,
          app_name: fn.text.app_name,
          description: fn.text.description,
          visible: fn.visible,
          terms: functionTerms[i],
          embedding: embed
            ? embedder.embedWith(fn.doc.embedding_text, setting, fieldTexts(fn.fields, 'functions'))
            : undefined,
        })),
        dictionary,
        options,
      );
      const request = (intent: string) => ({
        intent,
        mode: setting.mode,
        offset: 0,
        limit: 10,
        vector: embed ? embedder.embedWith(intent, setting, undefined, false) : undefined,
      });
      const rr = (rank: number) => (rank >= 0 ? 1 / (rank + 1) : 0);
      return {
        functions: lines.functions.map((line) =>
          rr(
            rankOf(
              engine.rankFunctions(request(line.intent), {}).map((hit) => hit.name),
              line.expected,
            ),
          ),
        ),
        apps: lines.apps.map((line) =>
          rr(
            rankOf(
              engine.rankApps(request(line.intent), {}).map((hit) => hit.name),
              line.expected,
            ),
          ),
        ),
      };
    },
  };
}

/** Lengths (in words) documents are cut to before the encoder reads them, in the grid: shorter texts encode faster. */
const ENCODER_WORDS = [16, 32];

/**
 * The sentence encoder's vectors of these texts (documents and intents), kept in a file per encoder
 * id in the temporary folder, so that a grid costs the encoding once. Undefined when the optional
 * packages are not installed (CV_ENCODER_FROM: a folder to resolve them from instead of here).
 */
async function encodedTexts(texts: string[]): Promise<{ id: string; vectors: Map<string, Float32Array> } | undefined> {
  const source = sentenceEncoderSource(process.env.CV_ENCODER_FROM);
  if (!source) {
    return undefined;
  }
  const id = `use-lite-${source.version}`;
  const file = join(tmpdir(), `patchbay-cv-${id}.json`);
  const vectors = new Map<string, Float32Array>();
  if (existsSync(file)) {
    for (const [text, vector] of Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, number[]>)) {
      vectors.set(text, Float32Array.from(vector));
    }
  }
  const missing = [...new Set(texts)].filter((text) => !vectors.has(text));
  if (missing.length > 0) {
    const encoder = await loadSentenceEncoder(source);
    const started = performance.now();
    const encoded = await encoder!.encode(missing);
    console.error(
      `sentence encoder: ${missing.length} texts in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    missing.forEach((text, i) => vectors.set(text, encoded[i]));
    writeFileSync(file, JSON.stringify(Object.fromEntries([...vectors].map(([text, v]) => [text, [...v]]))));
  }
  return { id, vectors };
}

/** recall@1, recall@5 and MRR of reciprocal ranks. */
export function figures(rr: number[]): Figures {
  const n = rr.length;
  return {
    recall1: rr.filter((value) => value === 1).length / n,
    recall5: rr.filter((value) => value >= 1 / 5).length / n,
    mrr: rr.reduce((sum, value) => sum + value, 0) / n,
  };
}

const fold = (index: number) => index % FOLDS;

function mean(values: number[], keep: (index: number) => boolean): number {
  let sum = 0;
  let count = 0;
  values.forEach((value, index) => {
    if (keep(index)) {
      sum += value;
      count++;
    }
  });
  return count ? sum / count : 0;
}

export interface CrossValidated {
  /** Reciprocal ranks of each line when its fold was held out. */
  functions: number[];
  apps: number[];
  /** The setting chosen on each fold's training part. */
  chosen: Setting[];
  /** The setting best on all lines (what the in-sample line shows). */
  best: Setting;
  bestRanks: { functions: number[]; apps: number[] };
}

/** k-fold selection among `settings` (all of one ranking family). */
export function crossValidate(
  settings: Setting[],
  ranks: Map<Setting, { functions: number[]; apps: number[] }>,
): CrossValidated {
  // The targets are recall@5 and MRR: both count, for functions and apps alike.
  const top5 = (rr: number[]) => rr.map((value) => (value >= 1 / 5 ? 1 : 0));
  const objective = (setting: Setting, keep: (line: number) => boolean) => {
    const r = ranks.get(setting)!;
    return mean(r.functions, keep) + mean(top5(r.functions), keep) + mean(r.apps, keep) + mean(top5(r.apps), keep);
  };
  const pick = (keep: (line: number) => boolean) =>
    settings.reduce((best, setting) => (objective(setting, keep) > objective(best, keep) ? setting : best));
  const functionCount = ranks.get(settings[0])!.functions.length;
  const appCount = ranks.get(settings[0])!.apps.length;
  const out = { functions: new Array<number>(functionCount), apps: new Array<number>(appCount) };
  const chosen: Setting[] = [];
  for (let k = 0; k < FOLDS; k++) {
    const setting = pick((line) => fold(line) !== k);
    chosen.push(setting);
    const r = ranks.get(setting)!;
    r.functions.forEach((value, line) => fold(line) === k && (out.functions[line] = value));
    r.apps.forEach((value, line) => fold(line) === k && (out.apps[line] = value));
  }
  const best = pick(() => true);
  return { ...out, chosen, best, bestRanks: ranks.get(best)! };
}

/** The settings searched, per ranking family. `default` is what the service ships. */
export function grid(hasWordVectors: boolean, encoderId?: string): Record<string, Setting[]> {
  const shares = hasWordVectors ? [0, 0.25, 0.5, 0.75, 1] : [0];
  const components = hasWordVectors ? [0, 1, 2] : [1];
  const sif = hasWordVectors ? [1e-4, 1e-3, 1e-2] : [1e-3];
  const embeddings: SemanticEmbeddingOptions[] = [];
  for (const semanticShare of shares) {
    for (const removeComponents of semanticShare === 0 ? [1] : components) {
      for (const sifA of semanticShare === 0 ? [1e-3] : sif) {
        embeddings.push({ semanticShare, removeComponents, sifA });
      }
    }
  }
  const hybrid: Setting[] = [];
  const vector: Setting[] = [];
  const families: Record<string, Setting[]> = {};
  const tagOf = (embedding: SemanticEmbeddingOptions) =>
    `share ${embedding.semanticShare}, pc ${embedding.removeComponents}, a ${embedding.sifA}`;
  for (const embedding of embeddings) {
    const tag = tagOf(embedding);
    vector.push({ label: tag, mode: 'vector', embedding, vectorWeight: 1 });
    for (const vectorWeight of [0.1, 0.25, 0.4, 0.6, 0.8, 1]) {
      hybrid.push({ label: `${tag}, vector weight ${vectorWeight}`, mode: 'hybrid', embedding, vectorWeight });
    }
  }
  // The candidates of issue 14, crossed with the sentence-vector settings that did best above (the
  // whole product would take an hour): reciprocal rank fusion instead of score fusion, IDF raised to
  // a power (generic words weaker or stronger), the app's vector similarity flowing to its functions,
  // and query expansion by word-vector neighbours. They join the hybrid family, so the folds choose among all.
  const neighbourGrid: NeighbourOptions[] = [];
  if (hasWordVectors) {
    for (const count of [2, 8]) {
      for (const weight of [0.2, 0.35]) {
        for (const minSimilarity of [0.55, 0.65]) {
          neighbourGrid.push({ count, weight, minSimilarity });
        }
      }
    }
  }
  const neighbourTag = (n: NeighbourOptions) => `neighbours ${n.count} × ${n.weight} ≥ ${n.minSimilarity}`;
  const strong = embeddings.filter(
    (e) => !hasWordVectors || ([0.5, 0.75].includes(e.semanticShare) && e.removeComponents === 2 && e.sifA <= 1e-3),
  );
  for (const embedding of strong) {
    for (const vectorWeight of [0.25, 0.5, 1, 2]) {
      hybrid.push({
        label: `${tagOf(embedding)}, rrf, vector weight ${vectorWeight}`,
        mode: 'hybrid',
        embedding,
        vectorWeight,
        fusion: 'rrf',
      });
    }
    for (const idfExponent of [0.75, 1.25, 1.5]) {
      for (const vectorWeight of [0.25, 0.4]) {
        hybrid.push({
          label: `${tagOf(embedding)}, vector weight ${vectorWeight}, idf^${idfExponent}`,
          mode: 'hybrid',
          embedding,
          vectorWeight,
          idfExponent,
        });
      }
    }
    for (const appVectorContext of [0.25, 0.5]) {
      for (const vectorWeight of [0.25, 0.4]) {
        hybrid.push({
          label: `${tagOf(embedding)}, vector weight ${vectorWeight}, app vector context ${appVectorContext}`,
          mode: 'hybrid',
          embedding,
          vectorWeight,
          appVectorContext,
        });
      }
    }
    for (const neighbours of neighbourGrid) {
      for (const vectorWeight of [0.25, 0.4]) {
        hybrid.push({
          label: `${tagOf(embedding)}, vector weight ${vectorWeight}, ${neighbourTag(neighbours)}`,
          mode: 'hybrid',
          embedding,
          vectorWeight,
          neighbours,
        });
      }
    }
  }
  families.hybrid = hybrid;
  const second = candidates(strong, hasWordVectors);
  Object.assign(families, second);
  // All of them at once, as the folds would choose if the candidates joined the default's grid.
  families['hybrid + second-round candidates'] = [
    ...hybrid,
    ...Object.values(second).flatMap((settings) => settings.slice(1)),
  ];
  if (encoderId) {
    Object.assign(families, encoderFamilies(embeddings));
  }
  const fixed = (mode: RankingMode): Setting[] => [
    { label: mode, mode, embedding: SEMANTIC_EMBEDDING_DEFAULTS, vectorWeight: 0 },
  ];
  Object.assign(families, { lexical: fixed('lexical'), bm25: fixed('bm25'), vector });
  if (hasWordVectors) {
    families['lexical + neighbours'] = [
      ...fixed('lexical'),
      ...[2, 4, 8].flatMap((count) =>
        [0.2, 0.35, 0.5].flatMap((weight) =>
          [0.45, 0.55, 0.65].map((minSimilarity): Setting => ({
            label: `lexical, ${neighbourTag({ count, weight, minSimilarity })}`,
            mode: 'lexical',
            embedding: SEMANTIC_EMBEDDING_DEFAULTS,
            vectorWeight: 0,
            neighbours: { count, weight, minSimilarity },
          })),
        ),
      ),
    ];
  }
  return families;
}

/**
 * The candidates of the second round of issue 14, each a family of its own: the default's setting
 * plus the candidate's settings (crossed with the sentence-vector settings that did best in the
 * first grid), so that CV shows whether the folds choose it and what it does on held-out lines.
 * - field-aware sentence vectors: name, description and parameter names embedded apart, weighted;
 * - BM25F field weights of functions (name, app, description, context) chosen by CV, not by hand;
 * - z-score fusion: each side standardised per query before the weighted sum (not divided by its best).
 */
function candidates(strong: SemanticEmbeddingOptions[], hasWordVectors: boolean): Record<string, Setting[]> {
  const tagOf = (embedding: SemanticEmbeddingOptions) =>
    `share ${embedding.semanticShare}, pc ${embedding.removeComponents}, a ${embedding.sifA}`;
  const base: Setting = {
    label: `${tagOf(SEMANTIC_EMBEDDING_DEFAULTS)}, vector weight ${DEFAULT_ENGINE_OPTIONS.vectorWeight} (default)`,
    mode: 'hybrid',
    embedding: SEMANTIC_EMBEDDING_DEFAULTS,
    vectorWeight: DEFAULT_ENGINE_OPTIONS.vectorWeight,
  };
  const out: Record<string, Setting[]> = {};
  if (hasWordVectors) {
    const fieldVectors: Setting[] = [base];
    const weightSets: FieldVectorWeights[] = [
      [1, 1, 0],
      [2, 1, 0],
      [1, 2, 0],
      [1, 1, 0.5],
      [2, 2, 1],
      [1, 1, 1],
    ];
    for (const embedding of strong) {
      for (const weights of weightSets) {
        for (const vectorWeight of [0.25, 0.4]) {
          fieldVectors.push({
            label: `${tagOf(embedding)}, vector weight ${vectorWeight}, field vectors ${weights.join('/')}`,
            mode: 'hybrid',
            embedding,
            vectorWeight,
            fieldVectors: weights,
          });
        }
      }
    }
    // Apps alone: an app's text (names, description, a list of function names) is the least like one sentence.
    for (const weights of weightSets) {
      fieldVectors.push({
        ...base,
        label: `${tagOf(SEMANTIC_EMBEDDING_DEFAULTS)}, vector weight ${base.vectorWeight}, field vectors of apps ${weights.join('/')}`,
        fieldVectors: weights,
        fieldVectorKinds: 'apps',
      });
    }
    out['hybrid: field vectors'] = fieldVectors;
  }
  const lexicalWeights: Setting[] = [base];
  const defaults = DEFAULT_ENGINE_OPTIONS.functionFields.weights;
  for (const name of [2, 3, 4]) {
    for (const app of [1, 2, 3]) {
      for (const description of [1, 1.5]) {
        for (const context of [0.3, 0.6]) {
          const weights = { name, app, description, context };
          if (Object.entries(weights).every(([field, value]) => defaults[field] === value)) {
            continue;
          }
          lexicalWeights.push({
            ...base,
            label: `${tagOf(SEMANTIC_EMBEDDING_DEFAULTS)}, vector weight ${base.vectorWeight}, function fields name ${name} app ${app} description ${description} context ${context}`,
            functionWeights: weights,
          });
        }
      }
    }
  }
  out['hybrid: lexical field weights'] = lexicalWeights;
  const zscore: Setting[] = [base];
  for (const embedding of hasWordVectors ? strong : [SEMANTIC_EMBEDDING_DEFAULTS]) {
    for (const vectorWeight of [0.25, 0.5, 0.75, 1]) {
      zscore.push({
        label: `${tagOf(embedding)}, z-score fusion, vector weight ${vectorWeight}`,
        mode: 'hybrid',
        embedding,
        vectorWeight,
        fusion: 'zscore',
      });
    }
  }
  out['hybrid: z-score fusion'] = zscore;
  return out;
}

/**
 * The sentence encoder (issue 14, third round): its vector alone, and beside the offline vector
 * (the default's, or the hashed features alone) with a share of the cosine, crossed with the vector
 * weight and the similarity floor (a dense model's unrelated pairs score 0.1–0.3, not 0). Each family
 * includes the default's setting, so the folds choose between them.
 */
function encoderFamilies(embeddings: SemanticEmbeddingOptions[]): Record<string, Setting[]> {
  const base: Setting = {
    label: `default (${DEFAULT_ENGINE_OPTIONS.vectorWeight})`,
    mode: 'hybrid',
    embedding: SEMANTIC_EMBEDDING_DEFAULTS,
    vectorWeight: DEFAULT_ENGINE_OPTIONS.vectorWeight,
  };
  const hashedOnly = embeddings.find((e) => e.semanticShare === 0)!;
  const hybrid: Setting[] = [base];
  const vector: Setting[] = [];
  for (const minSimilarity of [0.12, 0.25, 0.35]) {
    vector.push({
      label: `encoder alone, floor ${minSimilarity}`,
      mode: 'vector',
      embedding: SEMANTIC_EMBEDDING_DEFAULTS,
      vectorWeight: 1,
      encoder: { share: 1 },
      minSimilarity,
    });
    for (const [embeddingTag, embedding, shares] of [
      ['default offline', SEMANTIC_EMBEDDING_DEFAULTS, [0.25, 0.5, 0.75, 1]],
      ['hashed', hashedOnly, [0.25, 0.5, 0.75]],
    ] as const) {
      for (const share of shares) {
        for (const vectorWeight of [0.1, 0.25, 0.4, 0.6, 0.8, 1]) {
          hybrid.push({
            label: `${share === 1 ? 'encoder alone' : `${embeddingTag} + encoder ${share}`}, vector weight ${vectorWeight}, floor ${minSimilarity}`,
            mode: 'hybrid',
            embedding,
            vectorWeight,
            encoder: { share },
            minSimilarity,
          });
        }
      }
    }
  }
  // Documents cut to their first words before the encoder reads them (the catalogue encodes faster).
  const cut: Setting[] = [base];
  for (const words of ENCODER_WORDS) {
    for (const minSimilarity of [0.12, 0.25]) {
      for (const share of [0.5, 0.75]) {
        for (const vectorWeight of [0.25, 0.4, 0.6]) {
          cut.push({
            label: `default offline + encoder ${share} of the first ${words} words, vector weight ${vectorWeight}, floor ${minSimilarity}`,
            mode: 'hybrid',
            embedding: SEMANTIC_EMBEDDING_DEFAULTS,
            vectorWeight,
            encoder: { share, words },
            minSimilarity,
          });
        }
      }
    }
  }
  return {
    'hybrid: sentence encoder': hybrid,
    'hybrid: sentence encoder, documents cut': cut,
    'vector: sentence encoder': vector,
  };
}

const describe = (s: Setting) => s.label;

/** Reciprocal ranks per setting, computed once (families share settings). */
export function rankCache(evaluator: Evaluator): (setting: Setting) => { functions: number[]; apps: number[] } {
  const cache = new Map<Setting, { functions: number[]; apps: number[] }>();
  return (setting) => {
    let ranks = cache.get(setting);
    if (!ranks) {
      ranks = evaluator.reciprocalRanks(setting);
      cache.set(setting, ranks);
    }
    return ranks;
  };
}

async function main(): Promise<void> {
  const evaluator = await createEvaluator();
  const families = grid(evaluator.hasWordVectors, evaluator.encoderId);
  // CV_FAMILIES=a,b: only the families whose names start with one of these (a quick look at a candidate).
  const only = process.env.CV_FAMILIES?.split(',');
  const cache = rankCache(evaluator);
  for (const [family, settings] of Object.entries(families)) {
    if (only && !only.some((prefix) => family.startsWith(prefix))) {
      continue;
    }
    const started = performance.now();
    const ranks = new Map(settings.map((setting) => [setting, cache(setting)]));
    const cv = crossValidate(settings, ranks);
    const f = (rr: number[]) => {
      const m = figures(rr);
      return `${m.recall1.toFixed(3)} ${m.recall5.toFixed(3)} ${m.mrr.toFixed(3)}`;
    };
    if (process.env.CV_DUMP) {
      for (const [setting, r] of ranks) {
        console.log(`  ${describe(setting)}: functions ${f(r.functions)} apps ${f(r.apps)}`);
      }
    }
    console.log(`${family}: best in-sample: ${describe(cv.best)}`);
    console.log(`  in-sample functions ${f(cv.bestRanks.functions)} apps ${f(cv.bestRanks.apps)}`);
    console.log(`  cross-val functions ${f(cv.functions)} apps ${f(cv.apps)}`);
    cv.chosen.forEach((setting, k) => console.log(`  fold ${k}: ${describe(setting)}`));
    console.log(`  ${settings.length} settings in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
