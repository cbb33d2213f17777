import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatcherFetch, type FetchLike } from './dispatcher-fetch.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The fetch the MCP client SDK's transport is given, against a real local server. */
describe('dispatcherFetch', () => {
  let server: Server;
  let base: string;
  let agent: Agent;
  let fetchFn: FetchLike;
  const received: Received[] = [];
  const fallbackCalls: string[] = [];
  let streamOpen: ServerResponse | undefined;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        if (req.url === '/empty') {
          res.writeHead(202).end();
        } else if (req.url === '/gone') {
          res.writeHead(204, { 'x-seen': 'yes' }).end();
        } else if (req.url === '/events') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: first\n\n');
          streamOpen = res;
        } else {
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'S1' });
          res.end(JSON.stringify({ echoed: Buffer.concat(chunks).toString() }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    agent = new Agent({ maxResponseSize: 1024 });
    fetchFn = dispatcherFetch(agent, (url) => {
      fallbackCalls.push(String(url));
      return Promise.resolve(new Response('fallback'));
    });
  });

  afterAll(async () => {
    streamOpen?.end();
    await agent.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the method, the headers and the string body, and answers a Response with the status, headers and body', async () => {
    const controller = new AbortController();
    const response = await fetchFn(`${base}/mcp?x=1`, {
      method: 'POST',
      headers: new Headers({ 'content-type': 'application/json', authorization: 'Bearer T' }),
      body: '{"jsonrpc":"2.0"}',
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.ok).toBe(true);
    expect(response.headers.get('mcp-session-id')).toBe('S1');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ echoed: '{"jsonrpc":"2.0"}' });
    const last = received.at(-1)!;
    expect(last).toMatchObject({ method: 'POST', url: '/mcp?x=1', body: '{"jsonrpc":"2.0"}' });
    expect(last.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer T' });
    // The abort listener left with the exchange: a kept connection's signal does not gather them.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('answers bodiless statuses with no body, and an empty 202 as an empty body', async () => {
    const gone = await fetchFn(`${base}/gone`, { method: 'DELETE' });
    expect(gone.status).toBe(204);
    expect(gone.headers.get('x-seen')).toBe('yes');
    expect(gone.body).toBeNull();
    const accepted = await fetchFn(`${base}/empty`, { method: 'POST', body: '{}' });
    expect(accepted.status).toBe(202);
    expect(await accepted.text()).toBe('');
  });

  it('keeps an event stream a stream, read as it comes and ended by the signal', async () => {
    const controller = new AbortController();
    const response = await fetchFn(`${base}/events`, { method: 'GET', signal: controller.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value).toString()).toBe('data: first\n\n');
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
  });

  it('refuses an answer over the agent size limit', async () => {
    await expect(fetchFn(`${base}/mcp`, { method: 'POST', body: 'x'.repeat(2000) })).rejects.toMatchObject({
      code: 'UND_ERR_RES_EXCEEDED_MAX_SIZE',
    });
  });

  it('hands a body that is not a string to the fallback fetch', async () => {
    const response = await fetchFn(`${base}/token`, { method: 'POST', body: new URLSearchParams({ a: '1' }) });
    expect(await response.text()).toBe('fallback');
    expect(fallbackCalls).toEqual([`${base}/token`]);
  });
});
