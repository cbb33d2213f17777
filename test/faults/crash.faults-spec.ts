import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream } from '../e2e/execution/upstream.js';
import { startServe } from '../helpers/cli.js';
import { APP, client, configureAndLink, execute, newServiceData, prepareCatalogAndProject } from './service.js';

const ROUNDS = 3;
/** How long the writers run before the kill; long enough for dozens of acknowledged writes. */
const WRITE_MS = 2_500;

const embedded = !process.env.DATABASE_URL;

/**
 * A crash: SIGKILL of the embedded service while it writes (configuration changes, new linked
 * accounts, executions), several times over. Every next start opens the data directory (the dead
 * process's lock is taken over) and holds every write acknowledged with a 2xx before the kill.
 */
describe.skipIf(!embedded)('SIGKILL of the embedded service in the middle of writes', () => {
  // On a PostgreSQL server a killed instance holds no data of its own: the crash is the embedded database's.
  let upstream: Upstream;
  let data: Awaited<ReturnType<typeof newServiceData>>;
  let apiKey: string;

  beforeAll(async () => {
    data = await newServiceData('crash');
    upstream = await Upstream.start();
    apiKey = await prepareCatalogAndProject(data.env(), upstream.url);
  });

  afterAll(async () => {
    await upstream?.close();
    await data?.cleanup();
  });

  it(`loses no acknowledged write over ${ROUNDS} kills`, async () => {
    const linked = new Set<string>(['fault-user']);
    /** The last acknowledged `enabled`, and the one sent but not acknowledged when the kill came. */
    let enabledAcked: boolean | undefined;
    let enabledPending: boolean | undefined;
    let executionsAcked = 0;

    for (let round = 0; round <= ROUNDS; round += 1) {
      const server = await startServe(data.env());
      const call = client(server.url, apiKey);
      try {
        // What every earlier round had acknowledged is there.
        if (round === 0) {
          await configureAndLink(call);
          enabledAcked = true;
        } else {
          const accounts = await call('GET', `/v1/linked-accounts?app_name=${APP}`);
          expect(accounts.status).toBe(200);
          const owners = new Set(
            (accounts.body as { linked_account_owner_id: string }[]).map((a) => a.linked_account_owner_id),
          );
          for (const owner of linked) {
            expect(owners.has(owner), `linked account ${owner} acknowledged before kill ${round}`).toBe(true);
          }
          const configuration = await call('GET', `/v1/app-configurations/${APP}`);
          expect(configuration.status).toBe(200);
          expect([enabledAcked, enabledPending]).toContain((configuration.body as { enabled: boolean }).enabled);
          enabledAcked = (configuration.body as { enabled: boolean }).enabled;
          enabledPending = undefined;
          const log = await call('GET', '/v1/executions?limit=1000');
          expect(log.status).toBe(200);
          expect((log.body as unknown[]).length).toBeLessThanOrEqual(executionsAcked);
        }
        if (round === ROUNDS) {
          break;
        }

        let writing = true;
        const linker = (async () => {
          for (let i = 0; writing; i += 1) {
            const owner = `crash-${round}-${i}`;
            const answer = await call('POST', '/v1/linked-accounts/no-auth', {
              app_name: APP,
              linked_account_owner_id: owner,
            }).catch(() => undefined);
            if (answer?.status === 200) {
              linked.add(owner);
            }
          }
        })();
        const configurer = (async () => {
          while (writing) {
            enabledPending = !enabledAcked;
            const answer = await call('PATCH', `/v1/app-configurations/${APP}`, { enabled: enabledPending }).catch(
              () => undefined,
            );
            if (answer?.status === 200) {
              enabledAcked = enabledPending;
              enabledPending = undefined;
            }
          }
        })();
        const executor = (async () => {
          for (let n = 0; writing; n += 1) {
            const answer = await execute(call, n).catch(() => undefined);
            if (answer?.status === 200) {
              executionsAcked += 1;
            }
          }
        })();
        const before = linked.size;
        await new Promise((resolve) => setTimeout(resolve, WRITE_MS));
        const exited = once(server.child, 'exit');
        server.child.kill('SIGKILL');
        await exited;
        writing = false;
        await Promise.all([linker, configurer, executor]);
        expect(linked.size, 'the writers were acknowledged before the kill').toBeGreaterThan(before);
      } finally {
        if (server.child.exitCode === null && server.child.signalCode === null) {
          server.child.kill('SIGKILL');
        }
      }
    }
  });
});
