import { describe, expect, it } from 'vitest';
import { TermDictionary } from './lexical-index.js';
import { analyseFields, appDocument, functionDocument, SEARCH_FIELDS } from './search-document.js';
import { DEFAULT_ENGINE_OPTIONS, type RankRequest, SearchEngine } from './search-engine.js';

const dictionary = new TermDictionary();
const pack = (terms: Record<string, string[]>) => dictionary.pack(SEARCH_FIELDS.map((field) => terms[field]));

const mail = { name: 'MAILER', display_name: 'Mailer', description: 'Electronic mail', categories: ['Communication'] };
const files = { name: 'FILER', display_name: 'Filer', description: 'File storage', categories: ['Storage'] };
const fns = [
  { name: 'MAILER__SEND_EMAIL', app: mail, description: 'Sends an email to a recipient', tags: ['email'] },
  { name: 'MAILER__TRASH_MESSAGE', app: mail, description: 'Moves a message to the trash', tags: ['email'] },
  { name: 'FILER__UPLOAD_FILE', app: files, description: 'Uploads a file to a folder', tags: ['files'] },
  { name: 'FILER__DELETE_FILE', app: files, description: 'Deletes a file', tags: ['files'] },
  { name: 'FILER__LIST_FOLDERS', app: files, description: 'Lists the folders', tags: ['files'] },
];

/** A function as the engine takes it: its analysed document, visible. */
const functionItem = (fn: (typeof fns)[number]) => ({
  name: fn.name,
  app_name: fn.app.name,
  description: fn.description,
  visible: true,
  terms: pack(analyseFields(functionDocument({ ...fn, app_name: fn.app.name, parameters: {} }, fn.app).fields)),
});

const engine = SearchEngine.fromItems(
  [mail, files].map((app) => ({
    name: app.name,
    description: app.description,
    categories: app.categories,
    visible: true,
    terms: pack(
      analyseFields(
        appDocument(
          app,
          fns.filter((fn) => fn.app === app).map((fn) => ({ ...fn, tags: fn.tags })),
        ).fields,
      ),
    ),
  })),
  fns.map((fn) => functionItem(fn)),
  dictionary,
  { ...DEFAULT_ENGINE_OPTIONS, minSimilarity: 0 },
);

const request = (intent: string, page: Partial<RankRequest> = {}): RankRequest => ({
  intent,
  offset: 0,
  limit: 10,
  ...page,
});
const names = (hits: { name: string }[]) => hits.map((hit) => hit.name);

describe('SearchEngine (lexical side, without vectors)', () => {
  it('ranks the function whose name and description match first, then the rest of the catalogue by name', () => {
    expect(names(engine.rankFunctions(request('upload a file'), {}))).toEqual([
      'FILER__UPLOAD_FILE',
      'FILER__DELETE_FILE',
      'FILER__LIST_FOLDERS',
      'MAILER__SEND_EMAIL',
      'MAILER__TRASH_MESSAGE',
    ]);
  });

  it('uses the app as context, corrects typos and finds synonyms of the catalogue', () => {
    expect(names(engine.rankFunctions(request('mailer trash'), {}))[0]).toBe('MAILER__TRASH_MESSAGE');
    expect(names(engine.rankFunctions(request('uplaod'), {}))[0]).toBe('FILER__UPLOAD_FILE');
  });

  it('filters before ranking: app names and runnable functions', () => {
    expect(names(engine.rankFunctions(request('upload a file'), { appNames: ['MAILER'] }))).toEqual([
      'MAILER__SEND_EMAIL',
      'MAILER__TRASH_MESSAGE',
    ]);
    const runnable = new Map([['FILER', { all_functions_enabled: false, enabled_functions: ['FILER__LIST_FOLDERS'] }]]);
    expect(names(engine.rankFunctions(request('upload a file'), { runnable }))).toEqual(['FILER__LIST_FOLDERS']);
  });

  it('pages one total order: pages never overlap and add up to the whole list', () => {
    const whole = names(engine.rankFunctions(request('delete a message'), {}));
    const pages = [0, 2, 4].flatMap((offset) =>
      names(engine.rankFunctions(request('delete a message', { offset, limit: 2 }), {})),
    );
    expect(pages).toEqual(whole);
    expect(new Set(pages).size).toBe(fns.length);
  });

  it('ranks apps by their own text and their functions', () => {
    expect(names(engine.rankApps(request('folders'), {}))).toEqual(['FILER', 'MAILER']);
    expect(names(engine.rankApps(request('folders'), { categories: ['Communication'] }))).toEqual(['MAILER']);
    expect(names(engine.rankApps(request('folders'), { configured: new Set() }))).toEqual([]);
  });

  it('tells intents without a searchable word', () => {
    expect(SearchEngine.hasTerms('the and of')).toBe(false);
    expect(SearchEngine.hasTerms("it's & | !")).toBe(false);
    expect(SearchEngine.hasTerms('send mail')).toBe(true);
  });
});

describe('SearchEngine (score fusion of the lexical and vector sides)', () => {
  // Two-dimensional embeddings: the intent's vector [1, 0] is nearest to FILER__DELETE_FILE, then
  // FILER__LIST_FOLDERS.
  const functionVectors: Record<string, number[]> = {
    FILER__DELETE_FILE: [1, 0],
    FILER__LIST_FOLDERS: [0.9, 0.436],
    FILER__UPLOAD_FILE: [0, 1],
    MAILER__SEND_EMAIL: [-1, 0],
    MAILER__TRASH_MESSAGE: [-1, 0],
  };
  const appVectors: Record<string, number[]> = { MAILER: [1, 0], FILER: [-1, 0] };
  const build = (options: Partial<typeof DEFAULT_ENGINE_OPTIONS>) =>
    SearchEngine.fromItems(
      [mail, files].map((app) => ({
        name: app.name,
        description: app.description,
        categories: app.categories,
        visible: true,
        terms: pack(analyseFields(appDocument(app, []).fields)),
        embedding: Float32Array.from(appVectors[app.name]),
      })),
      fns.map((fn) => ({ ...functionItem(fn), embedding: Float32Array.from(functionVectors[fn.name]) })),
      dictionary,
      { ...DEFAULT_ENGINE_OPTIONS, minSimilarity: 0.1, ...options },
    );
  const vector = Float32Array.from([1, 0]);

  it('adds the weighted similarity to the lexical score, each divided by its best', () => {
    const query = request('upload a file', { vector });
    expect(names(build({ vectorWeight: 0 }).rankFunctions(query, {}))[0]).toBe('FILER__UPLOAD_FILE');
    expect(names(build({ vectorWeight: 2 }).rankFunctions(query, {})).slice(0, 3)).toEqual([
      'FILER__DELETE_FILE',
      'FILER__LIST_FOLDERS',
      'FILER__UPLOAD_FILE',
    ]);
  });

  it('ranks by similarity alone when the lexical weight is 0, the unrelated last by name', () => {
    const order = names(
      build({ lexicalWeight: 0, vectorWeight: 1 }).rankFunctions(request('upload a file', { vector }), {}),
    );
    expect(order).toEqual([
      'FILER__DELETE_FILE',
      'FILER__LIST_FOLDERS',
      'FILER__UPLOAD_FILE',
      'MAILER__SEND_EMAIL',
      'MAILER__TRASH_MESSAGE',
    ]);
  });
});

describe('SearchEngine (actions)', () => {
  const pets = { name: 'PETS', display_name: 'Pets', description: 'A pet store', categories: ['Shop'] };
  const operations = [
    { name: 'PETS__OP_A', method: 'GET', path: '/pets', description: 'Pets' },
    { name: 'PETS__OP_B', method: 'GET', path: '/pets/{id}', description: 'A pet' },
    { name: 'PETS__OP_C', method: 'POST', path: '/pets', description: 'A pet' },
    { name: 'PETS__OP_D', method: 'DELETE', path: '/pets/{id}', description: 'A pet' },
  ];
  const build = (expansion: typeof DEFAULT_ENGINE_OPTIONS.expansion) =>
    SearchEngine.fromItems(
      [{ ...pets, visible: true, terms: pack(analyseFields(appDocument(pets, []).fields)) }],
      operations.map((op) => ({
        name: op.name,
        app_name: 'PETS',
        description: op.description,
        visible: true,
        terms: pack(
          analyseFields(
            functionDocument(
              {
                ...op,
                app_name: 'PETS',
                tags: [],
                parameters: {},
                protocol_data: { method: op.method, path: op.path },
              },
              pets,
            ).fields,
          ),
        ),
      })),
      dictionary,
      { ...DEFAULT_ENGINE_OPTIONS, minSimilarity: 0, expansion },
    );

  it("reads a REST function's action from its method and path, and the intent's from its everyday verbs", () => {
    const engine = build(DEFAULT_ENGINE_OPTIONS.expansion);
    const first = (intent: string) => names(engine.rankFunctions(request(intent), {}))[0];
    expect(first('show me every pet')).toBe('PETS__OP_A');
    expect(first('erase that pet')).toBe('PETS__OP_D');
    expect(first('make a new pet')).toBe('PETS__OP_C');
  });

  it('without expansion, everyday verbs reach no action', () => {
    const engine = build(undefined);
    const order = names(engine.rankFunctions(request('erase the pet'), {}));
    expect(order[0]).not.toBe('PETS__OP_D');
  });
});
