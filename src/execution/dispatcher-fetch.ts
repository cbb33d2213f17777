import { Readable } from 'node:stream';
import type { Agent } from 'undici';
import { readAll } from './upstream-http.js';

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Statuses whose response has no body: a Response refuses one for them. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * `fetch` for the MCP client SDK's transport, over undici's request API on `agent` (its time and size
 * limits, its address check). The transport's requests have a string body (a JSON-RPC message) or none;
 * anything else goes to `fallback`.
 *
 * Why not undici's own fetch: it turns every string body into a web stream written to the socket in
 * pieces, wraps the exchange in Request and Response objects with an AbortController of their own, and
 * adds a listener to the transport's long-lived abort signal that only garbage collection takes off
 * again (thousands of them on a kept connection). In bench:execute's remote-MCP path (2026-11-29) that
 * was most of what Patchbay added to a call. Here the body goes out with the headers, the abort
 * listener leaves when the answer has been read, and a JSON answer is read whole before the Response is
 * made (the SDK reads it whole next); only an event stream stays a stream.
 */
export function dispatcherFetch(agent: Agent, fallback: FetchLike): FetchLike {
  return async (url, init) => {
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') {
      return fallback(url, init);
    }
    const target = typeof url === 'string' ? new URL(url) : url;
    const method = (init?.method ?? 'GET').toUpperCase();
    const answer = await agent.request({
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method,
      headers: headerRecord(init?.headers),
      body: body ?? undefined,
      signal: init?.signal ?? undefined,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) {
        for (const each of value) {
          headers.append(name, each);
        }
      } else if (value !== undefined) {
        headers.set(name, value);
      }
    }
    const status = answer.statusCode;
    if (NULL_BODY_STATUSES.has(status) || method === 'HEAD') {
      answer.body.resume();
      return new Response(null, { status, headers });
    }
    if (isEventStream(headers.get('content-type'))) {
      return new Response(Readable.toWeb(answer.body) as ReadableStream<Uint8Array>, { status, headers });
    }
    return new Response(await readAll(answer.body), { status, headers });
  };
}

function headerRecord(init: RequestInit['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  if (init === undefined) {
    return record;
  }
  for (const [name, value] of init instanceof Headers ? init : new Headers(init)) {
    record[name] = value;
  }
  return record;
}

function isEventStream(contentType: string | null): boolean {
  return contentType !== null && contentType.split(';', 1)[0].trim().toLowerCase() === 'text/event-stream';
}
