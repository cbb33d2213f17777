import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestProject } from '../../helpers/test-context.js';
import { TestApp } from '../../helpers/test-app.js';
import { json, Upstream } from '../execution/upstream.js';
import { ConnectBrowser, configuredApp, createLink } from './connect.js';

const MAX_ATTEMPTS = 4;

/** Verifies `X-Patchbay-Signature` the way a receiver would, from the secret shown at creation. */
function verify(secret: string, header: string, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) {
    return false;
  }
  const expected = createHmac('sha256', secret).update(`${match[1]}.${body}`).digest('hex');
  return expected === match[2] && Math.abs(Date.now() / 1000 - Number(match[1])) < 300;
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) {
      throw new Error('timed out waiting');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('connect-link webhooks', () => {
  let app: TestApp;
  let project: TestProject;
  let receiver: Upstream;

  beforeAll(async () => {
    receiver = await Upstream.start();
    app = await TestApp.start({
      OAUTH2_REDIRECT_ALLOWED_ORIGINS: receiver.url,
      CONNECT_LINK_WEBHOOK_ATTEMPTS: String(MAX_ATTEMPTS),
      CONNECT_LINK_WEBHOOK_BACKOFF_MS: '100',
    });
    project = await app.ctx.newProject();
  });

  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  beforeEach(() => receiver.reset());

  it('POSTs a signed connect_link.completed without any credential, retrying with backoff until a 2xx', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'api_key');
    const link = await createLink(app, project.apiKey, {
      app_name: catalogApp.name,
      linked_account_owner_id: 'hook-user',
      webhook_url: `${receiver.url}/hooks/patchbay?source=connect`,
    });
    receiver.respond((_request, response, index) => json(response, index < 2 ? 503 : 204, {}));

    const browser = new ConnectBrowser(app);
    const done = await browser.submit(await browser.open(link.url), { api_key: 'sk-webhook-never-sent' });
    expect(done.status).toBe(200);
    await waitFor(() => receiver.received.length >= 3);

    const [account] = (
      await app.get('/v1/linked-accounts', { apiKey: project.apiKey, query: { app_name: catalogApp.name } })
    ).body;
    const deliveries = receiver.received;
    expect(deliveries).toHaveLength(3);
    for (const delivery of deliveries) {
      expect(delivery.method).toBe('POST');
      expect(delivery.url).toBe('/hooks/patchbay?source=connect');
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(JSON.parse(delivery.body)).toEqual({
        event: 'connect_link.completed',
        connect_link_id: link.id,
        app_name: catalogApp.name,
        linked_account_owner_id: 'hook-user',
        linked_account_id: account.id,
      });
      expect(delivery.body).not.toContain('sk-webhook-never-sent');
      expect(
        verify(link.webhook_secret as string, delivery.headers['x-patchbay-signature'] as string, delivery.body),
      ).toBe(true);
      // A different key does not verify: the signature really depends on the link's secret.
      expect(verify('whsec_other', delivery.headers['x-patchbay-signature'] as string, delivery.body)).toBe(false);
    }
    // No more deliveries once one succeeded.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(3);
  });

  it('gives up after the configured number of attempts', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'no_auth');
    const link = await createLink(app, project.apiKey, {
      app_name: catalogApp.name,
      linked_account_owner_id: 'hook-user',
      webhook_url: `${receiver.url}/down`,
    });
    receiver.respondJson(500, { error: 'down' });
    const started = Date.now();
    const browser = new ConnectBrowser(app);
    expect((await browser.submit(await browser.open(link.url), {})).status).toBe(200);
    await waitFor(() => receiver.received.length >= MAX_ATTEMPTS);
    // Backoff 100, 200, 400 ms between the four attempts.
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(receiver.received).toHaveLength(MAX_ATTEMPTS);
  });

  it('POSTs connect_link.failed when the OAuth 2.0 flow comes back with an error; the link stays pending', async () => {
    const catalogApp = await configuredApp(app, project.apiKey, 'oauth2');
    const link = await createLink(app, project.apiKey, {
      app_name: catalogApp.name,
      linked_account_owner_id: 'hook-user',
      webhook_url: `${receiver.url}/hooks`,
    });
    const browser = new ConnectBrowser(app);
    await browser.open(link.url);
    const page = await browser.request(
      'GET',
      `/connect/${link.id}/oauth2-return?status=error&error=access_denied&error_description=The+user+said+no`,
    );
    expect(page.status).toBe(400);
    // Plain words; the provider's code and text go to the webhook, never onto the page (the query is not trusted).
    expect(page.text).toContain('You declined access, so nothing was linked.');
    expect(page.text).not.toContain('The user said no');
    await waitFor(() => receiver.received.length >= 1);
    expect(JSON.parse(receiver.last.body)).toEqual({
      event: 'connect_link.failed',
      connect_link_id: link.id,
      app_name: catalogApp.name,
      linked_account_owner_id: 'hook-user',
      linked_account_id: null,
      error: 'access_denied',
    });
    expect(
      verify(
        link.webhook_secret as string,
        receiver.last.headers['x-patchbay-signature'] as string,
        receiver.last.body,
      ),
    ).toBe(true);
  });
});
