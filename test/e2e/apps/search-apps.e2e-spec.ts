import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEntity } from '../../../src/apps/app.entity.js';
import { insertAppConfiguration } from '../../factories/app-configuration.factory.js';
import { TestApp } from '../../helpers/test-app.js';
import type { TestProject } from '../../helpers/test-context.js';

/** A fresh upper-case tag, so each test's rows are told apart from every other test's in the shared database. */
const unique = () => randomBytes(4).toString('hex').toUpperCase();

describe('GET /v1/apps/search (searchApps)', () => {
  let app: TestApp;
  let project: TestProject;

  beforeAll(async () => {
    app = await TestApp.start();
    project = await app.ctx.newProject();
  });

  afterAll(() => app.close());

  const search = (query: Record<string, any> = {}, apiKey?: string | null) =>
    app.get('/v1/apps/search', { query, apiKey });
  const basic = (a: AppEntity) => ({ name: a.name, description: a.description });

  /** Apps all in one fresh category, so a category filter returns exactly them. */
  async function appsInNewCategory(names: string[], overrides: Partial<AppEntity> = {}) {
    const category = `cat-${unique()}`;
    const apps = [];
    for (const name of names) {
      apps.push(await app.ctx.newApp({ name, categories: [category], ...overrides }));
    }
    return { category, apps };
  }

  it('returns visible apps as name and description, ordered by name', async () => {
    const tag = unique();
    const { category, apps } = await appsInNewCategory([`ZULU_${tag}`, `ALPHA_${tag}`, `MIKE_${tag}`]);

    const res = await search({ categories: category });

    expect(res.status).toBe(200);
    const sorted = [...apps].sort((x, y) => (x.name < y.name ? -1 : 1));
    expect(res.body).toEqual(sorted.map(basic));
  });

  it('orders the whole catalogue by name (byte order) when nothing is filtered', async () => {
    const tag = unique();
    await app.ctx.newApp({ name: `B_${tag}` });
    await app.ctx.newApp({ name: `A_${tag}_2` });
    await app.ctx.newApp({ name: `A${tag}` });

    const res = await search({ limit: 1000 });

    expect(res.status).toBe(200);
    const names: string[] = res.body.map((a: { name: string }) => a.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining([`B_${tag}`, `A_${tag}_2`, `A${tag}`]));
  });

  it('hides private and inactive apps', async () => {
    const tag = unique();
    const category = `cat-${tag}`;
    const shown = await app.ctx.newApp({ name: `SHOWN_${tag}`, categories: [category] });
    await app.ctx.newApp({ name: `PRIVATE_${tag}`, categories: [category], visibility: 'private' });
    await app.ctx.newApp({ name: `INACTIVE_${tag}`, categories: [category], active: false });

    const filtered = await search({ categories: category });
    const all = await search({ limit: 1000 });

    expect(filtered.body).toEqual([basic(shown)]);
    const names = all.body.map((a: { name: string }) => a.name);
    expect(names).toContain(`SHOWN_${tag}`);
    expect(names).not.toContain(`PRIVATE_${tag}`);
    expect(names).not.toContain(`INACTIVE_${tag}`);
  });

  it('filters by categories: apps having any of the given ones, repeated keys or a single value', async () => {
    const tag = unique();
    const [x, y, z, w] = ['x', 'y', 'z', 'w'].map((c) => `${c}-${tag}`);
    const a1 = await app.ctx.newApp({ name: `C1_${tag}`, categories: [x] });
    const a2 = await app.ctx.newApp({ name: `C2_${tag}`, categories: [y] });
    const a3 = await app.ctx.newApp({ name: `C3_${tag}`, categories: [z, x] });
    await app.ctx.newApp({ name: `C4_${tag}`, categories: [w] });

    const several = await search({ categories: [x, y] });
    const single = await search({ categories: z });
    const none = await search({ categories: `nothing-${tag}` });

    expect(several.body).toEqual([basic(a1), basic(a2), basic(a3)]);
    expect(single.body).toEqual([basic(a3)]);
    expect(none.status).toBe(200);
    expect(none.body).toEqual([]);
  });

  describe('configured_only', () => {
    it("returns only the apps configured in the caller's project", async () => {
      const other = await app.ctx.newProject('other project');
      const tag = unique();
      const { category, apps } = await appsInNewCategory([`P_${tag}`, `Q_${tag}`, `R_${tag}`, `S_${tag}`]);
      const [p, q, r] = apps;
      await insertAppConfiguration(app.dataSource, project.projectId, p.name);
      // A disabled configuration still makes the app configured.
      await insertAppConfiguration(app.dataSource, project.projectId, r.name, { enabled: false });
      await insertAppConfiguration(app.dataSource, other.projectId, q.name);

      const mine = await search({ categories: category, configured_only: true });
      const theirs = await search({ categories: category, configured_only: true }, other.apiKey);
      const everything = await search({ categories: category, configured_only: false });
      const byDefault = await search({ categories: category });

      expect(mine.body).toEqual([basic(p), basic(r)]);
      expect(theirs.body).toEqual([basic(q)]);
      expect(everything.body).toEqual(apps.map(basic));
      expect(byDefault.body).toEqual(apps.map(basic));
    });

    it('accepts the query boolean words (1, yes, on / 0, no, off)', async () => {
      const tag = unique();
      const { category, apps } = await appsInNewCategory([`T1_${tag}`, `T2_${tag}`]);
      await insertAppConfiguration(app.dataSource, project.projectId, apps[0].name);

      for (const word of ['1', 'yes', 'on', 'TRUE']) {
        expect((await search({ categories: category, configured_only: word })).body).toEqual([basic(apps[0])]);
      }
      for (const word of ['0', 'no', 'off', 'false']) {
        expect((await search({ categories: category, configured_only: word })).body).toEqual(apps.map(basic));
      }
    });

    it('never lists an invisible app, even when configured', async () => {
      const tag = unique();
      const category = `cat-${tag}`;
      const hidden = await app.ctx.newApp({ name: `HIDDEN_${tag}`, categories: [category], visibility: 'private' });
      const off = await app.ctx.newApp({ name: `OFF_${tag}`, categories: [category], active: false });
      await insertAppConfiguration(app.dataSource, project.projectId, hidden.name);
      await insertAppConfiguration(app.dataSource, project.projectId, off.name);

      const res = await search({ categories: category, configured_only: true });

      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });
  });

  describe("ACI's names: allowed_apps_only and include_functions", () => {
    it('allowed_apps_only is configured_only under another name, alone or combined', async () => {
      const tag = unique();
      const { category, apps } = await appsInNewCategory([`AA_${tag}`, `AB_${tag}`]);
      await insertAppConfiguration(app.dataSource, project.projectId, apps[0].name, { enabled: false });

      const aci = await search({ categories: category, allowed_apps_only: true });
      const ranked = await search({ categories: category, allowed_apps_only: true, intent: 'test application' });
      const combined = await search({ categories: category, allowed_apps_only: true, configured_only: false });
      const off = await search({ categories: category, allowed_apps_only: false });

      expect(aci.body).toEqual([basic(apps[0])]);
      expect(ranked.body).toEqual([basic(apps[0])]);
      expect(combined.body).toEqual([basic(apps[0])]);
      expect(off.body).toEqual(apps.map(basic));
    });

    it("include_functions=true adds each app's visible functions by name, listed and ranked", async () => {
      const tag = unique();
      const { category, apps } = await appsInNewCategory([`IF_A_${tag}`, `IF_B_${tag}`]);
      const [withFns, empty] = apps;
      const z = await app.ctx.newFunction(withFns.name, { name: `${withFns.name}__Z`, description: 'Zed' });
      const a = await app.ctx.newFunction(withFns.name, { name: `${withFns.name}__A`, description: 'Ay' });
      await app.ctx.newFunction(withFns.name, { visibility: 'private' });
      await app.ctx.newFunction(withFns.name, { active: false });
      const expected = [
        { ...basic(withFns), functions: [a, z].map((f) => ({ name: f.name, description: f.description })) },
        { ...basic(empty), functions: [] },
      ];

      const listed = await search({ categories: category, include_functions: true });
      const ranked = await search({ categories: category, include_functions: true, intent: withFns.description });
      const without = await search({ categories: category, include_functions: false });

      expect(listed.body).toEqual(expected);
      expect(ranked.body).toEqual(expected);
      expect(without.body).toEqual(apps.map(basic));
    });
  });

  describe('pagination', () => {
    it('pages with limit and offset do not overlap and cover every app in order', async () => {
      const tag = unique();
      const { category, apps } = await appsInNewCategory(
        ['G', 'C', 'E', 'A', 'F', 'B', 'D'].map((letter) => `PAGE_${letter}_${tag}`),
      );
      const expected = apps.map((a) => a.name).sort();

      const pages = [];
      for (const offset of [0, 3, 6]) {
        const res = await search({ categories: category, limit: 3, offset });
        expect(res.status).toBe(200);
        pages.push(res.body.map((a: { name: string }) => a.name));
      }
      const beyond = await search({ categories: category, limit: 3, offset: 7 });

      expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
      expect(pages.flat()).toEqual(expected);
      expect(new Set(pages.flat()).size).toBe(7);
      expect(beyond.body).toEqual([]);
    });

    it('defaults to limit 100 and offset 0', async () => {
      const tag = unique();
      for (let i = 0; i < 101; i++) {
        await app.ctx.newApp({ name: `BULK_${tag}_${String(i).padStart(3, '0')}` });
      }

      const byDefault = await search();
      const everything = await search({ limit: 1000, offset: 0 });

      expect(byDefault.status).toBe(200);
      expect(byDefault.body).toHaveLength(100);
      expect(everything.body.length).toBeGreaterThan(100);
      expect(byDefault.body).toEqual(everything.body.slice(0, 100));
    });

    it('accepts the bounds 1 and 1000 for limit', async () => {
      expect((await search({ limit: 1 })).body).toHaveLength(1);
      expect((await search({ limit: 1000 })).status).toBe(200);
    });
  });

  describe('intent', () => {
    it('ranks an app first for the words of its own description', async () => {
      const tag = unique();
      const zebra = await app.ctx.newApp({
        name: `ZEBRAWEATHER_${tag}`,
        display_name: 'Zebra Weather',
        description: 'Forecasts rain, snowfall and thunderstorms for savanna habitats',
        categories: ['Weather'],
      });

      const res = await search({ intent: 'thunderstorm forecast for the savanna' });

      expect(res.status).toBe(200);
      expect(res.body[0]).toEqual(basic(zebra));
    });

    it('weighs the name, display name and categories as well as the description', async () => {
      const tag = unique();
      const category = `cat-${tag}`;
      const byName = await app.ctx.newApp({ name: `QUOKKA_${tag}`, categories: [category] });
      const byDisplay = await app.ctx.newApp({
        name: `DN_${tag}`,
        display_name: 'Wombat Tracker',
        categories: [category],
      });
      const byCategory = await app.ctx.newApp({ name: `CT_${tag}`, categories: [category, 'Platypus'] });

      for (const [intent, expected] of [
        ['quokka', byName],
        ['wombat', byDisplay],
        ['platypus', byCategory],
      ] as const) {
        const res = await search({ intent, categories: category });
        expect(res.body[0]).toEqual(basic(expected));
      }
    });

    it('keeps apps that match no word after the matching ones, ties and non-matches by name', async () => {
      const tag = unique();
      const category = `cat-${tag}`;
      const noMatchA = await app.ctx.newApp({ name: `A_NONE_${tag}`, categories: [category] });
      // The two ties differ only in their names' first letter (the factory numbers display names).
      const tieZ = await app.ctx.newApp({
        name: `Z_TIE_${tag}`,
        display_name: 'Invoice Sender',
        description: 'Sends invoices to customers',
        categories: [category],
      });
      const tieB = await app.ctx.newApp({
        name: `B_TIE_${tag}`,
        display_name: 'Invoice Sender',
        description: 'Sends invoices to customers',
        categories: [category],
      });
      const best = await app.ctx.newApp({
        name: `Y_BEST_${tag}`,
        description: 'Invoices: create invoices, send invoices, void invoices, track overdue invoices',
        categories: [category],
      });
      const noMatchC = await app.ctx.newApp({ name: `C_NONE_${tag}`, categories: [category] });

      const res = await search({ intent: 'overdue invoices', categories: category });

      expect(res.body).toEqual([best, tieB, tieZ, noMatchA, noMatchC].map(basic));
    });

    it('pages a ranked result without overlap', async () => {
      const tag = unique();
      const category = `cat-${tag}`;
      for (let i = 0; i < 6; i++) {
        await app.ctx.newApp({
          name: `RANK_${i}_${tag}`,
          description: i % 2 ? 'Stores photos in albums' : 'Plays music playlists',
          categories: [category],
        });
      }

      const full = await search({ intent: 'photo albums', categories: category });
      const pages = [];
      for (const offset of [0, 2, 4]) {
        pages.push((await search({ intent: 'photo albums', categories: category, limit: 2, offset })).body);
      }

      expect(full.body).toHaveLength(6);
      expect(full.body.slice(0, 3).map((a: { description: string }) => a.description)).toEqual(
        Array(3).fill('Stores photos in albums'),
      );
      expect(pages.flat()).toEqual(full.body);
    });

    it('orders by name when the intent has no searchable word, and is safe with query syntax', async () => {
      const tag = unique();
      const { category, apps } = await appsInNewCategory([`W2_${tag}`, `W1_${tag}`]);
      const byName = apps.map(basic).reverse();

      for (const intent of ['the and of', '   ', "it's & | ! : * ( ) <-> '' \\", 'x'.repeat(300)]) {
        const res = await search({ intent, categories: category });
        expect(res.status).toBe(200);
        expect(res.body).toEqual(byName);
      }
    });
  });

  describe('intent: the search index', () => {
    const names = (res: { body: { name: string }[] }) => res.body.map((a: { name: string }) => a.name);

    it('finds an app through what its functions do', async () => {
      const tag = unique();
      const category = `cat-${tag}`;
      const chat = await app.ctx.newApp({
        name: `CHATTY_${tag}`,
        description: 'Team messaging',
        categories: [category],
      });
      await app.ctx.newFunction(chat.name, {
        name: `${chat.name}__PINS_ADD`,
        description: 'Pins a message to a channel',
        tags: ['pins'],
      });
      await app.ctx.newFunction(chat.name, {
        name: `${chat.name}__REACTIONS_ADD`,
        description: 'Adds an emoji reaction to a message',
        tags: ['emoji'],
      });
      await app.ctx.newApp({ name: `MAILY_${tag}`, description: 'Team messaging over email', categories: [category] });

      const res = await search({ intent: 'team messaging with pins and emoji reactions', categories: category });

      expect(names(res)[0]).toBe(chat.name);
    });

    it('applies categories before ranking', async () => {
      const tag = unique();
      const [x, y] = [`x-${tag}`, `y-${tag}`];
      await app.ctx.newApp({ name: `BEST_${tag}`, description: 'Forecasts thunderstorms', categories: [x] });
      const weaker = await app.ctx.newApp({ name: `WEAK_${tag}`, description: 'Weather of sorts', categories: [y] });
      const other = await app.ctx.newApp({ name: `OTHER_${tag}`, description: 'Counts sheep', categories: [y] });

      const res = await search({ intent: 'thunderstorm forecast weather', categories: y });

      expect(res.body).toEqual([basic(weaker), basic(other)]);
    });

    it("applies configured_only before ranking, for the caller's project", async () => {
      const tag = unique();
      const category = `cat-${tag}`;
      await app.ctx.newApp({ name: `UNCONF_${tag}`, description: 'Invoices and payments', categories: [category] });
      const configured = await app.ctx.newApp({
        name: `CONF_${tag}`,
        description: 'Payments only',
        categories: [category],
      });
      await insertAppConfiguration(app.dataSource, project.projectId, configured.name, { enabled: false });

      const res = await search({ intent: 'invoices payments', categories: category, configured_only: true });

      expect(res.body).toEqual([basic(configured)]);
    });

    it('never lists private or inactive apps', async () => {
      const tag = unique();
      const shown = await app.ctx.newApp({ name: `SHOWN_${tag}`, description: `Quantum flux ${tag}` });
      await app.ctx.newApp({ name: `PRIVATE_${tag}`, description: `Quantum flux ${tag}`, visibility: 'private' });
      await app.ctx.newApp({ name: `INACTIVE_${tag}`, description: `Quantum flux ${tag}`, active: false });

      const res = await search({ intent: `quantum flux ${tag}`, limit: 1000 });

      expect(names(res).filter((name) => name.includes(tag))).toEqual([shown.name]);
      expect(res.body[0]).toEqual(basic(shown));
    });
  });

  describe('API key', () => {
    it('answers 401 without a key', async () => {
      const res = await search({}, null);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
    });

    it('answers 401 with a wrong key', async () => {
      const res = await search({}, 'not-a-real-key');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.stringContaining('X-API-KEY') });
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
      [
        { limit: '1.5' },
        'limit',
        'int_parsing',
        'Input should be a valid integer, unable to parse string as an integer',
      ],
      [{ offset: -1 }, 'offset', 'greater_than_equal', 'Input should be greater than or equal to 0'],
      [
        { offset: 'x' },
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
      const res = await search({ limit: 0, offset: -1, configured_only: 'maybe' });
      expect(res.status).toBe(422);
      expect(res.body.detail).toHaveLength(3);
      expect(res.body.detail).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ loc: ['query', 'limit'], type: 'greater_than_equal' }),
          expect.objectContaining({ loc: ['query', 'offset'], type: 'greater_than_equal' }),
          expect.objectContaining({ loc: ['query', 'configured_only'], type: 'bool_parsing' }),
        ]),
      );
    });

    it('checks the API key before the input', async () => {
      const res = await search({ limit: 0 }, null);
      expect(res.status).toBe(401);
    });
  });
});
