/**
 * `node dist/bench/request-logger.js` (after `tsc -p tsconfig.bench.json`): what a request logger costs per
 * request when nothing is written (LOG_LEVEL=warn, a request that succeeds). Compares the service's lazy
 * child (libs/common/src/logging/pino-logger.ts) with the eager `logger.child({ req })` that `pino-http`
 * (and so `nestjs-pino`) makes for every request, both on the service's real logger (redaction and
 * serialisers on). Prints nanoseconds per request for each.
 */
import { Writable } from 'node:stream';
import { createPino, LazyChildLogger } from '../libs/common/src/index.js';

const REQUESTS = 200_000;
const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
const parent = createPino('warn', sink);

function request(i: number) {
  return {
    id: `req-${i}`,
    method: 'POST',
    url: `/v1/functions/GITHUB__GET_USER/execute?i=${i}`,
    headers: { 'x-api-key': 'pb_0123456789abcdef', 'content-type': 'application/json', host: '127.0.0.1' },
  };
}

function time(label: string, perRequest: (i: number) => void): number {
  for (let i = 0; i < 20_000; i += 1) {
    perRequest(i);
  }
  const start = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i += 1) {
    perRequest(i);
  }
  const ns = Number(process.hrtime.bigint() - start) / REQUESTS;
  process.stdout.write(`${label}: ${ns.toFixed(0)} ns per request\n`);
  return ns;
}

// Each request logs one line below the level, as a handler's debug line would.
const lazy = time('lazy child (Patchbay)', (i) => {
  new LazyChildLogger(parent, { reqId: `req-${i}` }, {}).info('request completed');
});
const eager = time('eager child({ req }) (pino-http)', (i) => {
  parent.child({ req: request(i) }).info('request completed');
});
process.stdout.write(`eager costs ${(eager - lazy).toFixed(0)} ns more per request (x${(eager / lazy).toFixed(1)})\n`);
