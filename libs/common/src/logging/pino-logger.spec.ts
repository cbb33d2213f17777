import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LogCapture } from '../../../../test/helpers/log-capture.js';
import { createPino, LazyChildLogger, redactUrl } from './pino-logger.js';

describe('log redaction', () => {
  it('replaces the values of secret query parameters and keeps the rest', () => {
    expect(redactUrl('/v1/linked-accounts/oauth2/callback?code=abc123&state=xyz&lang=en')).toBe(
      '/v1/linked-accounts/oauth2/callback?code=%5Bredacted%5D&state=%5Bredacted%5D&lang=en',
    );
    expect(redactUrl('/v1/apps/search?intent=send+email')).toBe('/v1/apps/search?intent=send+email');
    expect(redactUrl('/v1/health')).toBe('/v1/health');
  });

  it('the real logger never writes API keys, authorization headers, credential fields or secret query values', () => {
    const logs = new LogCapture();
    const logger = createPino('trace', logs);
    logger.info({ req: { headers: { 'x-api-key': 'pb_secret', authorization: 'Bearer tok' } } }, 'request');
    logger.info({ headers: { 'x-api-key': 'pb_other', authorization: 'Basic dXNlcjpwdw==' } }, 'upstream');
    logger.info({ body: { api_key: 'k1', password: 'p1', token: 't1', client_secret: 's1' } }, 'body');
    logger.info({ tokens: { access_token: 'at1', refresh_token: 'rt1' } }, 'tokens');
    logger.info({ req: { id: 'r1', method: 'GET', url: '/v1/linked-accounts/oauth2/callback?code=c0de&state=st4te' } });
    expect(logs.lines()).toHaveLength(5);
    const text = logs.lines().join('\n');
    for (const secret of ['pb_secret', 'Bearer tok', 'pb_other', 'dXNlcjpwdw', 'k1', 'p1', 't1', 's1', 'at1', 'rt1']) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain('c0de');
    expect(text).not.toContain('st4te');
    expect(logs.records()[2]).toMatchObject({ body: { api_key: '[redacted]', client_secret: '[redacted]' } });
  });
});

describe('LazyChildLogger', () => {
  function sinkLogger(level: string) {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    let children = 0;
    const parent = pino(
      {
        level,
        base: undefined,
        onChild: () => {
          children += 1;
        },
      },
      sink,
    );
    return { parent, lines, children: () => children };
  }

  it('makes no child for lines below the level, and writes enabled lines with the request bindings', () => {
    const { parent, lines, children } = sinkLogger('warn');
    const log = new LazyChildLogger(parent, { reqId: 'r-1' }, {});
    log.info({ res: { statusCode: 200 } }, 'request completed');
    log.debug('detail');
    expect(children()).toBe(0);
    expect(lines).toEqual([]);
    expect(log.level).toBe('warn');
    expect(log.isLevelEnabled('info')).toBe(false);

    log.warn({ err: 'boom' }, 'upstream trouble');
    log.error('failed');
    expect(children()).toBe(1);
    expect(lines.map((line) => [line.reqId, line.msg, line.level])).toEqual([
      ['r-1', 'upstream trouble', 40],
      ['r-1', 'failed', 50],
    ]);
  });

  it('follows a level change made on it, and makes grandchildren from the real child', () => {
    const { parent, lines } = sinkLogger('warn');
    const log = new LazyChildLogger(parent, { reqId: 'r-2' }, {});
    log.level = 'info';
    log.info('now visible');
    log.child({ part: 'upstream' }).info('nested');
    expect(parent.level).toBe('warn');
    expect(lines.map((line) => [line.reqId, line.part, line.msg])).toEqual([
      ['r-2', undefined, 'now visible'],
      ['r-2', 'upstream', 'nested'],
    ]);
  });
});
