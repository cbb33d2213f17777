/**
 * The embedded PostgreSQL (PGlite with pgvector) and its wire-protocol server, on a thread of its
 * own: PGlite runs every query synchronously in WebAssembly, so on the main thread each insert of
 * the execution log or each catalogue query would hold up the HTTP requests being served.
 *
 * Messages (see embedded-database.ts): the thread posts `ready` with the port or `failed`; it
 * answers `dump` with `dumped` and `close` with `closed`, then ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedWorkerData {
  /** Folder of the PostgreSQL data, or undefined for memory. */
  pgData?: string;
  loadDataDir?: ArrayBuffer;
  maxConnections: number;
}

export type EmbeddedWorkerRequest = { type: 'dump' } | { type: 'close' };

export type EmbeddedWorkerMessage =
  | { type: 'ready'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'dumped'; data: ArrayBuffer }
  | { type: 'closed' };

const port = parentPort;
if (!port) {
  throw new Error('embedded-database.worker runs as a worker thread');
}
const post = (message: EmbeddedWorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

/**
 * PostgreSQL's buffer cache. PGlite's WebAssembly memory grows to hold it and never shrinks, so the
 * default 128 MB would stay in the service's RSS; the files under it are in the OS page cache anyway
 * (or in memory, for `memory://`), and one embedded user needs little of its own.
 */
const SHARED_BUFFERS = '16MB';

const options = workerData as EmbeddedWorkerData;
try {
  const db = await PGlite.create({
    dataDir: options.pgData,
    extensions: { vector },
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
    loadDataDir: options.loadDataDir ? new Blob([options.loadDataDir]) : undefined,
  });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: options.maxConnections });
  await server.start();
  port.on('message', (request: EmbeddedWorkerRequest) => {
    void (async () => {
      if (request.type === 'dump') {
        const data = await (await db.dumpDataDir('none')).arrayBuffer();
        post({ type: 'dumped', data }, [data]);
      } else {
        await server.stop();
        await db.close();
        post({ type: 'closed' });
        port.close();
      }
    })();
  });
  post({ type: 'ready', port: Number(server.getServerConn().split(':').pop()) });
} catch (error) {
  post({ type: 'failed', message: (error as Error).message });
  port.close();
}
