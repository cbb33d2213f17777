import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEntity } from '../../../src/apps/app.entity.js';
import type { FunctionEntity } from '../../../src/functions/function.entity.js';
import { insertAppConfiguration } from '../../factories/app-configuration.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

/** A fresh upper-case tag, so each test's rows are told apart from every other test's in the shared database. */
const unique = () => randomBytes(4).toString('hex').toUpperCase();

describe('GET /v1/functions/search (searchFunctions)', () => {
  let app: TestApp;
  let project: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const search = (query: Record<string, any> = {}, apiKey?: string | null) =>
    app.get('/v1/functions/search', { query, apiKey });
  const basic = (f: FunctionEntity) => ({ name: f.name, description: f.description });
  const byName = (fns: FunctionEntity[]) => [...fns].sort((x, y) => (x.name < y.name ? -1 : 1)).map(basic);

  /** A visible app with functions of the given suffixes. */
  async function appWith(suffixes: string[], overrides: Partial<AppEntity> = {}) {
    const a = await app.ctx.newApp({ name: `FN_${unique()}`, ...overrides });
    const fns = [];
    for (const suffix of suffixes) {
      fns.push(await app.ctx.newFunction(a.name, { name: `${a.name}__${suffix}` }));
    }
    return { app: a, fns };
  }

  it('returns the functions of the given app as name and description, ordered by name', async () => {
    const { app: a, fns } = await appWith(['UPDATE', 'CREATE', 'DELETE']);

    const res = await search({ app_names: a.name });

    expect(res.status).toBe(200);
    expect(res.body).toEqual(byName(fns));
  });

  it('restricts to several apps with repeated app_names keys', async () => {
    const one = await appWith(['B', 'A']);
    const two = await appWith(['C']);
    await appWith(['D']);

    const res = await search({ app_names: [one.app.name, two.app.name] });

    expect(res.body).toEqual(byName([...one.fns, ...two.fns]));
  });

  it('orders the whole catalogue by name when nothing is filtered', async () => {
    const { fns } = await appWith(['Z', 'A_B', 'AB']);

    const res = await search({ limit: 1000 });

    expect(res.status).toBe(200);
    const names: string[] = res.body.map((f: { name: string }) => f.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(fns.map((f) => f.name)));
  });

  it('hides private and inactive functions and every function of a private or inactive app', async () => {
    const { app: a, fns } = await appWith(['SHOWN']);
    const privateFn = await app.ctx.newFunction(a.name, { visibility: 'private' });
    const inactiveFn = await app.ctx.newFunction(a.name, { active: false });
    const privateApp = await appWith(['X'], { visibility: 'private' });
    const inactiveApp = await appWith(['Y'], { active: false });

    const filtered = await search({ app_names: [a.name, privateApp.app.name, inactiveApp.app.name] });
    const all = await search({ limit: 1000 });

    expect(filtered.body).toEqual(fns.map(basic));
    const names = all.body.map((f: { name: string }) => f.name);
    for (const hidden of [privateFn, inactiveFn, ...privateApp.fns, ...inactiveApp.fns]) {
      expect(names).not.toContain(hidden.name);
    }
  });

  it('returns an empty list for an unknown app name', async () => {
    const res = await search({ app_names: 'NO_SUCH_APP' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  describe('configured_only', () => {
    it('returns every visible function of an app whose enabled configuration enables all functions', async () => {
      const { app: a, fns } = await appWith(['ONE', 'TWO']);
      await app.ctx.newFunction(a.name, { visibility: 'private' });
      const unconfigured = await appWith(['THREE']);
      await insertAppConfiguration(app.dataSource, project.projectId, a.name);

      const res = await search({ app_names: [a.name, unconfigured.app.name], configured_only: true });
      const unrestricted = await search({ app_names: [a.name, unconfigured.app.name], configured_only: false });

      expect(res.body).toEqual(byName(fns));
      expect(unrestricted.body).toEqual(byName([...fns, ...unconfigured.fns]));
    });

    it('returns only the enabled functions when the configuration selects some', async () => {
      const { app: a, fns } = await appWith(['READ', 'WRITE', 'ADMIN']);
      const hidden = await app.ctx.newFunction(a.name, { name: `${a.name}__HIDDEN`, active: false });
      const [read, , admin] = fns;
      await insertAppConfiguration(app.dataSource, project.projectId, a.name, {
        all_functions_enabled: false,
        enabled_functions: [read.name, admin.name, hidden.name],
      });

      const res = await search({ app_names: a.name, configured_only: true });

      expect(res.body).toEqual(byName([read, admin]));
    });

    it('returns nothing for a disabled configuration', async () => {
      const { app: a } = await appWith(['ONE']);
      await insertAppConfiguration(app.dataSource, project.projectId, a.name, { enabled: false });

      const res = await search({ app_names: a.name, configured_only: true });

      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });

    it("looks only at the caller's project", async () => {
      const other = await app.ctx.newProject('other project');
      const mine = await appWith(['MINE']);
      const theirs = await appWith(['THEIRS']);
      await insertAppConfiguration(app.dataSource, project.projectId, mine.app.name);
      await insertAppConfiguration(app.dataSource, other.projectId, theirs.app.name);
      const names = [mine.app.name, theirs.app.name];

      const forMe = await search({ app_names: names, configured_only: true });
      const forThem = await search({ app_names: names, configured_only: 'yes' }, other.apiKey);

      expect(forMe.body).toEqual(mine.fns.map(basic));
      expect(forThem.body).toEqual(theirs.fns.map(basic));
    });

    it('never lists functions of an invisible app, even when configured', async () => {
      const { app: a } = await appWith(['ONE'], { visibility: 'private' });
      await insertAppConfiguration(app.dataSource, project.projectId, a.name);

      const res = await search({ app_names: a.name, configured_only: true });

      expect(res.body).toEqual([]);
    });
  });

  describe("ACI's names: allowed_apps_only and allowed_only", () => {
    /** One app with an enabled configuration enabling some functions, one disabled, one unconfigured. */
    async function scenario() {
      const { app: some, fns } = await appWith(['READ', 'WRITE']);
      const [read] = fns;
      const off = await appWith(['OFF']);
      const none = await appWith(['NONE']);
      await insertAppConfiguration(app.dataSource, project.projectId, some.name, {
        all_functions_enabled: false,
        enabled_functions: [read.name],
      });
      await insertAppConfiguration(app.dataSource, project.projectId, off.app.name, { enabled: false });
      return { read, scope: [some.name, off.app.name, none.app.name] };
    }

    it.each([['allowed_only'], ['allowed_apps_only'], ['configured_only']])(
      '%s=true lists only what the project can run right now',
      async (flag) => {
        const { read, scope } = await scenario();

        const listed = await search({ app_names: scope, [flag]: true });
        const ranked = await search({ app_names: scope, [flag]: true, intent: 'performs test action' });

        expect(listed.status).toBe(200);
        expect(listed.body).toEqual([basic(read)]);
        expect(ranked.body).toEqual([basic(read)]);
      },
    );

    it('applies the strictest filter whatever combination is given', async () => {
      const { read, scope } = await scenario();

      for (const query of [
        { allowed_only: true, configured_only: false },
        { allowed_only: false, configured_only: true },
        { allowed_apps_only: true, allowed_only: false },
        { allowed_apps_only: true, allowed_only: true, configured_only: true },
      ]) {
        const res = await search({ app_names: scope, ...query });
        expect(res.body).toEqual([basic(read)]);
      }
      const all = await search({ app_names: scope, allowed_only: false, allowed_apps_only: false });
      expect(all.body).toHaveLength(4);
    });

    it('answers 422 for a flag that is not a boolean', async () => {
      const res = await search({ allowed_only: 'maybe', allowed_apps_only: 'x' });

      expect(res.status).toBe(422);
      expect(res.body.detail.map((d: { loc: string[] }) => d.loc)).toEqual([
        ['query', 'allowed_apps_only'],
        ['query', 'allowed_only'],
      ]);
    });
  });

  describe('format', () => {
    const PARAMETERS = {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          properties: { q: { type: 'string' }, key: { type: 'string', default: 'k' } },
          required: ['q', 'key'],
          visible: ['q'],
          additionalProperties: false,
        },
      },
      required: ['query'],
      visible: ['query'],
      additionalProperties: false,
    };
    const VISIBLE = {
      type: 'object',
      properties: {
        query: {
          type: 'object',
          properties: { q: { type: 'string' } },
          required: ['q'],
          additionalProperties: false,
        },
      },
      required: ['query'],
      additionalProperties: false,
    };

    async function twoFunctions() {
      const a = await app.ctx.newApp({ name: `FMT_${unique()}` });
      const first = await app.ctx.newFunction(a.name, {
        name: `${a.name}__ALPHA`,
        description: 'Look up weather stations',
        parameters: PARAMETERS,
      });
      const second = await app.ctx.newFunction(a.name, {
        name: `${a.name}__BETA`,
        description: 'Look up tide stations',
        parameters: PARAMETERS,
      });
      return { a, first, second };
    }

    it('answers FunctionBasic by default and for format=basic', async () => {
      const { a, first, second } = await twoFunctions();

      const plain = await search({ app_names: a.name });
      const basicFormat = await search({ app_names: a.name, format: 'basic' });

      expect(plain.body).toEqual([basic(first), basic(second)]);
      expect(basicFormat.body).toEqual(plain.body);
    });

    it.each([
      [
        'openai',
        (f: FunctionEntity) => ({
          type: 'function',
          function: { name: f.name, description: f.description, parameters: VISIBLE },
        }),
      ],
      [
        'openai_responses',
        (f: FunctionEntity) => ({ type: 'function', name: f.name, description: f.description, parameters: VISIBLE }),
      ],
      ['anthropic', (f: FunctionEntity) => ({ name: f.name, description: f.description, input_schema: VISIBLE })],
    ])('answers the %s shape with the visible parameters, listed and ranked', async (format, shape) => {
      const { a, first, second } = await twoFunctions();

      const listed = await search({ app_names: a.name, format });
      const ranked = await search({ app_names: a.name, format, intent: 'tide stations' });

      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([shape(first), shape(second)]);
      expect(ranked.body).toEqual([shape(second), shape(first)]);
      // The same shape as the definition endpoint gives.
      const definition = await app.get(`/v1/functions/${first.name}/definition`, { query: { format } });
      expect(listed.body[0]).toEqual(definition.body);
    });

    it('answers 422 enum for an unknown format', async () => {
      const res = await search({ format: 'gemini' });

      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          {
            loc: ['query', 'format'],
            msg: "Input should be 'basic', 'openai', 'openai_responses' or 'anthropic'",
            type: 'enum',
          },
        ],
      });
    });
  });

  describe('pagination', () => {
    it('pages with limit and offset do not overlap and cover every function in order', async () => {
      const { app: a, fns } = await appWith(['G', 'C', 'E', 'A', 'F', 'B', 'D']);
      const expected = fns.map((f) => f.name).sort();

      const pages = [];
      for (const offset of [0, 3, 6]) {
        const res = await search({ app_names: a.name, limit: 3, offset });
        expect(res.status).toBe(200);
        pages.push(res.body.map((f: { name: string }) => f.name));
      }
      const beyond = await search({ app_names: a.name, limit: 3, offset: 7 });

      expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
      expect(pages.flat()).toEqual(expected);
      expect(new Set(pages.flat()).size).toBe(7);
      expect(beyond.body).toEqual([]);
    });

    it('defaults to limit 100 and offset 0', async () => {
      const bulk = await app.ctx.newApp({ name: `BULK_${unique()}` });
      for (let i = 0; i < 101; i++) {
        await app.ctx.newFunction(bulk.name, { name: `${bulk.name}__F${String(i).padStart(3, '0')}` });
      }

      const byDefault = await search();
      const everything = await search({ limit: 1000, offset: 0 });

      expect(byDefault.body).toHaveLength(100);
      expect(everything.body.length).toBeGreaterThan(100);
      expect(byDefault.body).toEqual(everything.body.slice(0, 100));
    });
  });

  describe('intent', () => {
    it('ranks a function first for the words of its own description', async () => {
      const a = await app.ctx.newApp({ name: `TELCO_${unique()}` });
      const sms = await app.ctx.newFunction(a.name, {
        name: `${a.name}__SEND_SMS`,
        description: 'Send a text message to a mobile phone number',
        tags: ['sms', 'messaging'],
      });
      await app.ctx.newFunction(a.name, { name: `${a.name}__LIST_NUMBERS`, description: 'List rented numbers' });

      const res = await search({ intent: 'text a mobile phone' });

      expect(res.status).toBe(200);
      expect(res.body[0]).toEqual(basic(sms));
    });

    it("ranks on the function name, its tags and its app's display name", async () => {
      const tag = unique();
      const plain = await app.ctx.newApp({ name: `PLAIN_${tag}` });
      const named = await app.ctx.newFunction(plain.name, { name: `${plain.name}__ARCHIVE_TICKET` });
      const tagged = await app.ctx.newFunction(plain.name, { tags: ['kanban'] });
      const brand = await app.ctx.newApp({ name: `BRAND_${tag}`, display_name: 'Zephyrus Boards' });
      const branded = await app.ctx.newFunction(brand.name);
      const names = [plain.name, brand.name];

      for (const [intent, expected] of [
        ['archive a ticket', named],
        ['kanban', tagged],
        ['zephyrus', branded],
      ] as const) {
        const res = await search({ intent, app_names: names });
        expect(res.body[0]).toEqual(basic(expected));
      }
    });

    it('keeps functions that match no word after the matching ones, exact ties by name', async () => {
      const a = await app.ctx.newApp({ name: `ORDER_${unique()}` });
      const fn = (suffix: string, description: string) =>
        app.ctx.newFunction(a.name, { name: `${a.name}__${suffix}`, description, tags: [] });
      const noneA = await fn('A', 'Rotate a key');
      // The function name is ranked too: these two differ only by stop words, so they tie exactly.
      const tieZ = await fn('THE', 'Upload a file');
      const tieB = await fn('AN', 'Upload a file');
      const best = await fn('Y', 'Upload a large file in chunks, resuming an interrupted upload');
      const noneC = await fn('C', 'Delete a key');

      const res = await search({ intent: 'resume upload', app_names: a.name });

      // The non-matches come last; their order among themselves is the word vectors' when installed.
      expect(res.body.slice(0, 3)).toEqual([best, tieB, tieZ].map(basic));
      expect(res.body.slice(3)).toEqual(expect.arrayContaining([noneA, noneC].map(basic)));
      expect(res.body).toHaveLength(5);
    });

    it('orders by name when the intent has no searchable word, and is safe with query syntax', async () => {
      const { app: a, fns } = await appWith(['W2', 'W1']);

      for (const intent of ['the and of', '  ', "it's & | ! : * ( ) <-> '' \\"]) {
        const res = await search({ intent, app_names: a.name });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(byName(fns));
      }
    });
  });

  describe('intent: the search index', () => {
    const names = (res: { body: { name: string }[] }) => res.body.map((f) => f.name);

    it('finds a function through its app when its own text does not name it (the app as context)', async () => {
      const tag = unique();
      const mail = await app.ctx.newApp({
        name: `QUOKKAMAIL_${tag}`,
        display_name: 'Quokkamail',
        description: 'Electronic mail for marsupials',
      });
      const chat = await app.ctx.newApp({ name: `WOMBATCHAT_${tag}`, display_name: 'Wombatchat' });
      const mailSend = await app.ctx.newFunction(mail.name, {
        name: `${mail.name}__SEND_MESSAGE`,
        description: 'Sends a message to a recipient',
      });
      const chatSend = await app.ctx.newFunction(chat.name, {
        name: `${chat.name}__SEND_MESSAGE`,
        description: 'Sends a message to a recipient',
      });

      const viaApp = await search({ intent: 'send a quokkamail message', app_names: [mail.name, chat.name] });
      const viaDescription = await search({ intent: 'message marsupials', app_names: [mail.name, chat.name] });

      expect(names(viaApp)).toEqual([mailSend.name, chatSend.name]);
      expect(names(viaDescription)[0]).toBe(mailSend.name);
    });

    it('tolerates a typo and a glued or split name', async () => {
      const a = await app.ctx.newApp({ name: `HACKERNEWS_${unique()}`, display_name: 'Hacker News' });
      const top = await app.ctx.newFunction(a.name, {
        name: `${a.name}__TOP_STORIES`,
        description: 'Fetches the top stories',
      });
      await app.ctx.newFunction(a.name, { name: `${a.name}__USER`, description: 'Fetches a user profile' });

      for (const intent of ['top storise', 'hackernews top stories', 'hacker news top stories']) {
        const res = await search({ intent, app_names: a.name });
        expect(res.body[0]).toEqual(basic(top));
      }
    });

    it('applies app_names before ranking: a better match in another app is not listed', async () => {
      const tag = unique();
      const other = await app.ctx.newApp({ name: `OTHER_${tag}` });
      const mine = await app.ctx.newApp({ name: `MINE_${tag}` });
      await app.ctx.newFunction(other.name, {
        name: `${other.name}__ARCHIVE_INVOICE`,
        description: 'Archive an invoice',
      });
      const weak = await app.ctx.newFunction(mine.name, { name: `${mine.name}__LIST`, description: 'Lists invoices' });
      const unrelated = await app.ctx.newFunction(mine.name, {
        name: `${mine.name}__PING`,
        description: 'Checks health',
      });

      const res = await search({ intent: 'archive invoice', app_names: mine.name });

      expect(res.body).toEqual([basic(weak), basic(unrelated)]);
    });

    it('applies configured_only before ranking, per the configuration of the caller project', async () => {
      const tag = unique();
      const all = await app.ctx.newApp({ name: `CONF_ALL_${tag}` });
      const some = await app.ctx.newApp({ name: `CONF_SOME_${tag}` });
      const off = await app.ctx.newApp({ name: `CONF_OFF_${tag}` });
      const make = (appName: string, suffix: string) =>
        app.ctx.newFunction(appName, { name: `${appName}__${suffix}`, description: `Refund a payment (${suffix})` });
      const allA = await make(all.name, 'A');
      const someA = await make(some.name, 'A');
      await make(some.name, 'B');
      await make(off.name, 'A');
      await insertAppConfiguration(app.dataSource, project.projectId, all.name);
      await insertAppConfiguration(app.dataSource, project.projectId, some.name, {
        all_functions_enabled: false,
        enabled_functions: [someA.name],
      });
      await insertAppConfiguration(app.dataSource, project.projectId, off.name, { enabled: false });
      const scope = [all.name, some.name, off.name];

      const res = await search({ intent: 'refund a payment', app_names: scope, configured_only: true });
      const unrestricted = await search({ intent: 'refund a payment', app_names: scope });

      expect(names(res).sort()).toEqual([allA.name, someA.name].sort());
      expect(unrestricted.body).toHaveLength(4);
    });

    it('never lists private or inactive functions, or functions of private or inactive apps', async () => {
      const tag = unique();
      const open = await app.ctx.newApp({ name: `VIS_${tag}` });
      const hiddenApp = await app.ctx.newApp({ name: `VIS_HIDDEN_${tag}`, visibility: 'private' });
      const offApp = await app.ctx.newApp({ name: `VIS_OFF_${tag}`, active: false });
      const text = { description: `Teleport a zorblax ${tag}` };
      const shown = await app.ctx.newFunction(open.name, { name: `${open.name}__SHOWN`, ...text });
      await app.ctx.newFunction(open.name, { name: `${open.name}__PRIVATE`, visibility: 'private', ...text });
      await app.ctx.newFunction(open.name, { name: `${open.name}__INACTIVE`, active: false, ...text });
      await app.ctx.newFunction(hiddenApp.name, { name: `${hiddenApp.name}__F`, ...text });
      await app.ctx.newFunction(offApp.name, { name: `${offApp.name}__F`, ...text });

      const res = await search({ intent: `teleport zorblax ${tag}`, limit: 1000 });

      const listed = names(res);
      expect(listed[0]).toBe(shown.name);
      expect(listed.filter((name) => name.includes(tag))).toEqual([shown.name]);
    });

    it('sees every write at once: a new function, a changed description, a deleted function', async () => {
      const tag = unique();
      const a = await app.ctx.newApp({ name: `LIVE_${tag}` });
      const fn = await app.ctx.newFunction(a.name, { name: `${a.name}__F`, description: 'Polishes a gizmo' });

      expect(names(await search({ intent: 'polish gizmo', app_names: a.name }))).toEqual([fn.name]);
      expect((await search({ intent: 'polish gizmo' })).body[0]).toEqual(basic(fn));

      await app.dataSource.query(`UPDATE functions SET description = 'Launches a rocket' WHERE name = $1`, [fn.name]);
      const changed = await search({ intent: 'launch rocket' });
      expect(changed.body[0]).toEqual({ name: fn.name, description: 'Launches a rocket' });

      await app.dataSource.query(`DELETE FROM functions WHERE name = $1`, [fn.name]);
      expect(names(await search({ intent: 'launch rocket', limit: 1000 }))).not.toContain(fn.name);
    });

    it('pages a ranked result with limit and offset: no overlap, same order as one big page', async () => {
      const a = await app.ctx.newApp({ name: `RANKPAGE_${unique()}` });
      const descriptions = [
        'Upload a photo to an album',
        'Delete a photo',
        'Share an album with a friend',
        'Upload a video',
        'Rotate a key',
        'Measure the tide',
        'Tag a photo in an album',
      ];
      for (const [i, description] of descriptions.entries()) {
        await app.ctx.newFunction(a.name, { name: `${a.name}__F${i}`, description, tags: [] });
      }
      const query = { intent: 'upload photo album', app_names: a.name };

      const full = await search({ ...query, limit: 100 });
      const pages = [];
      for (const offset of [0, 3, 6]) {
        pages.push(...(await search({ ...query, limit: 3, offset })).body);
      }

      expect(full.body).toHaveLength(7);
      expect(full.body[0]).toEqual({ name: `${a.name}__F0`, description: 'Upload a photo to an album' });
      expect(pages).toEqual(full.body);
      // Unrelated functions close the list, by name.
      expect(names(full).slice(-2)).toEqual([`${a.name}__F4`, `${a.name}__F5`]);
    });
  });

  describe('API key', () => {
    it('answers 401 without a key and with a wrong key', async () => {
      const missing = await search({}, null);
      const wrong = await search({}, 'wrong-key');

      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
    });
  });

  describe('422', () => {
    it.each([
      [{ limit: 0 }, 'limit', 'greater_than_equal', 'Input should be greater than or equal to 1'],
      [{ limit: 1001 }, 'limit', 'less_than_equal', 'Input should be less than or equal to 1000'],
      [
        { limit: 'abc' },
        'limit',
        'int_parsing',
        'Input should be a valid integer, unable to parse string as an integer',
      ],
      [{ offset: -1 }, 'offset', 'greater_than_equal', 'Input should be greater than or equal to 0'],
      [
        { offset: '' },
        'offset',
        'int_parsing',
        'Input should be a valid integer, unable to parse string as an integer',
      ],
      [
        { configured_only: 'maybe' },
        'configured_only',
        'bool_parsing',
        'Input should be a valid boolean, unable to interpret input',
      ],
    ])('%j → %s %s', async (query, field, type, msg) => {
      const res = await search(query);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ loc: ['query', field], msg, type }] });
    });

    it('reports every invalid parameter at once', async () => {
      const res = await search({ limit: 1001, offset: 'x' });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual(
        expect.arrayContaining([
          { loc: ['query', 'limit'], msg: 'Input should be less than or equal to 1000', type: 'less_than_equal' },
          expect.objectContaining({ loc: ['query', 'offset'], type: 'int_parsing' }),
        ]),
      );
      expect(res.body.detail).toHaveLength(2);
    });
  });
});
