import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../libs/common/src/index.js';
import { AppConfig } from '../../src/config/app-config.js';
import { LinkedAccountEntity } from '../../src/linked-accounts/linked-account.entity.js';
import { LinkedAccountsRepository } from '../../src/linked-accounts/linked-accounts.repository.js';
import { TestApp } from '../helpers/test-app.js';

const ON_SERVER = Boolean(process.env.DATABASE_URL);

/**
 * The linked-account queries that carry a concurrency rule: the OAuth 2.0 / connect-link upsert (one
 * account per project, app and owner, whatever races) and the refresh under the row lock (one refresher at
 * a time on a server; a decision that writes nothing writes nothing).
 */
describe('LinkedAccountsRepository (medium: real database)', () => {
  let app: TestApp;
  let accounts: LinkedAccountsRepository;
  let box: SecretBox;
  let projectId: string;
  let appName: string;
  let owners = 0;

  beforeAll(async () => {
    app = await TestApp.start();
    accounts = app.app.get(LinkedAccountsRepository);
    box = app.app.get(SecretBox);
    projectId = (await app.ctx.newProject()).projectId;
    appName = (await app.ctx.newApp({ security_schemes: { oauth2: {}, api_key: {} } })).name;
  });

  afterAll(() => app.close());

  const stored = (id: string) => app.dataSource.getRepository(LinkedAccountEntity).findOneByOrFail({ id });
  const owner = () => `medium-owner-${++owners}`;
  const upsert = (ownerId: string, credentials: object, id = randomUUID()) =>
    accounts.upsertAccount({
      id,
      project_id: projectId,
      app_name: appName,
      linked_account_owner_id: ownerId,
      security_scheme: 'oauth2',
      credentials: box.sealJson(credentials),
    });

  describe('upsertAccount', () => {
    it('inserts a new account with the id it is given, enabled and not needing a relink', async () => {
      const id = randomUUID();
      expect(await upsert(owner(), { access_token: 'a1' }, id)).toBe(id);
      expect(await stored(id)).toMatchObject({ enabled: true, needs_relink: false, security_scheme: 'oauth2' });
    });

    it("a second link of the same owner keeps the account's id and enabled flag, replaces the credentials and clears needs_relink", async () => {
      const ownerId = owner();
      const first = await upsert(ownerId, { access_token: 'old' });
      await app.dataSource.query(
        `UPDATE "linked_accounts" SET "enabled" = false, "needs_relink" = true, "security_scheme" = 'api_key' WHERE "id" = $1`,
        [first],
      );
      const again = await upsert(ownerId, { access_token: 'new' });
      expect(again).toBe(first);
      const row = await stored(first);
      expect(row).toMatchObject({ enabled: false, needs_relink: false, security_scheme: 'oauth2' });
      expect(box.openJson(row.credentials)).toEqual({ access_token: 'new' });
    });

    it('concurrent links of one new owner make exactly one account, and every caller gets its id', async () => {
      const ownerId = owner();
      const ids = await Promise.all(Array.from({ length: 12 }, (_, n) => upsert(ownerId, { access_token: `t${n}` })));
      expect(new Set(ids).size).toBe(1);
      const rows = await app.dataSource
        .getRepository(LinkedAccountEntity)
        .findBy({ project_id: projectId, app_name: appName, linked_account_owner_id: ownerId });
      expect(rows.map((row) => row.id)).toEqual([ids[0]]);
    });
  });

  describe('withLockedAccount', () => {
    it('hands work the stored row and writes the credentials it decides, leaving the other columns', async () => {
      const id = await upsert(owner(), { access_token: 'before' });
      await accounts.setEnabled(projectId, id, false);
      const result = await accounts.withLockedAccount(id, (row) => {
        expect(row && box.openJson(row.credentials)).toEqual({ access_token: 'before' });
        expect(row?.needs_relink).toBe(false);
        return Promise.resolve({ value: 'refreshed', credentials: box.sealJson({ access_token: 'after' }) });
      });
      expect(result).toEqual({ value: 'refreshed', written: true });
      const row = await stored(id);
      expect(box.openJson(row.credentials)).toEqual({ access_token: 'after' });
      expect(row).toMatchObject({ enabled: false, needs_relink: false });
    });

    it('sets needs_relink without touching the credentials, and a later decision cannot clear it', async () => {
      const id = await upsert(owner(), { access_token: 'kept' });
      await accounts.withLockedAccount(id, () => Promise.resolve({ value: null, needsRelink: true }));
      await accounts.withLockedAccount(id, () => Promise.resolve({ value: null, needsRelink: false }));
      const row = await stored(id);
      expect(row.needs_relink).toBe(true);
      expect(box.openJson(row.credentials)).toEqual({ access_token: 'kept' });
    });

    it('writes nothing when work decides nothing (updated_at stays)', async () => {
      const id = await upsert(owner(), { access_token: 'same' });
      const before = await stored(id);
      const result = await accounts.withLockedAccount(id, () => Promise.resolve({ value: 1 }));
      expect(result).toEqual({ value: 1, written: false });
      expect((await stored(id)).updated_at).toEqual(before.updated_at);
    });

    it('hands work null for an account that does not exist', async () => {
      let seen: unknown = 'not called';
      await accounts.withLockedAccount(randomUUID(), (row) => {
        seen = row;
        return Promise.resolve({ value: null });
      });
      expect(seen).toBeNull();
    });

    // The embedded database has one owner process: OAuth2Tokens' in-process single flight is the lock there.
    it.runIf(ON_SERVER)(
      'a second refresher waits for the first and reads what it wrote (a PostgreSQL server only: the row lock)',
      async () => {
        expect(app.app.get(AppConfig).embedded).toBe(false);
        const id = await upsert(owner(), { access_token: 'v0' });
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let firstHasLock!: () => void;
        const locked = new Promise<void>((resolve) => (firstHasLock = resolve));
        const first = accounts.withLockedAccount(id, async () => {
          firstHasLock();
          await held;
          return { value: 'first', credentials: box.sealJson({ access_token: 'v1' }) };
        });
        await locked;
        let secondSaw: unknown;
        const second = accounts.withLockedAccount(id, (row) => {
          secondSaw = row && box.openJson(row.credentials);
          return Promise.resolve({ value: 'second' });
        });
        // The second caller is blocked on the row lock while the first holds it.
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(secondSaw).toBeUndefined();
        release();
        await Promise.all([first, second]);
        expect(secondSaw).toEqual({ access_token: 'v1' });
      },
    );
  });
});
