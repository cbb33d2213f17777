import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp } from '../../helpers/test-app.js';

const unique = () => randomBytes(3).toString('hex').toUpperCase();

/**
 * A small catalogue in four domains whose texts share no word (and no WordNet synonym) with the
 * intents below: only the word vectors bring "trucks" near "vehicles" and "fleet".
 */
describe('intent search with the word vectors (offline default)', () => {
  let app: TestApp;
  const names: Record<string, string> = {};

  beforeAll(async () => {
    app = await TestApp.start();
    await app.ctx.newProject();
    const apps = [
      { key: 'BILLING', description: 'Payments platform', categories: ['Finance'] },
      { key: 'AGENDA', description: 'Scheduling service', categories: ['Productivity'] },
      { key: 'DRIVE', description: 'Document storage', categories: ['Storage'] },
      { key: 'FLEET', description: 'Logistics platform', categories: ['Logistics'] },
    ];
    const functions: [string, string, string][] = [
      ['BILLING', 'CREATE_REFUND', 'Creates a refund for a charge'],
      ['BILLING', 'LIST_CHARGES', 'Lists the charges of a customer'],
      ['AGENDA', 'CREATE_EVENT', 'Creates an event in a calendar'],
      ['AGENDA', 'LIST_EVENTS', 'Lists the events of a calendar'],
      ['DRIVE', 'UPLOAD_FILE', 'Uploads a file to a folder'],
      ['DRIVE', 'SHARE_FILE', 'Shares a file with a user'],
      ['FLEET', 'GET_ROUTE', 'Computes the route between two addresses'],
      ['FLEET', 'LIST_VEHICLES', 'Lists the vehicles of the fleet'],
    ];
    const tag = unique();
    for (const { key, description, categories } of apps) {
      names[key] = `${key}_${tag}`;
      await app.ctx.newApp({ name: names[key], display_name: key.toLowerCase(), description, categories });
    }
    for (const [key, suffix, description] of functions) {
      await app.ctx.newFunction(names[key], { name: `${names[key]}__${suffix}`, description, tags: [] });
    }
  });

  afterAll(() => app.close());

  it('finds the function for a paraphrase that shares no word with it', async () => {
    const res = await app.get('/v1/functions/search', {
      query: { intent: 'which trucks do we own', app_names: Object.values(names), limit: 3 },
    });
    expect(res.status).toBe(200);
    expect(res.body[0].name).toBe(`${names.FLEET}__LIST_VEHICLES`);
  });

  it('finds the app for a paraphrase of what it does', async () => {
    const res = await app.get('/v1/apps/search', { query: { intent: 'our lorries', limit: 1 } });
    expect(res.status).toBe(200);
    expect(res.body[0].name).toBe(names.FLEET);
  });
});
