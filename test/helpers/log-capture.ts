import { Writable } from 'node:stream';

/** A log destination that keeps every line the real logger writes, for tests to search. */
export class LogCapture extends Writable {
  private readonly chunks: string[] = [];

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk.toString());
    done();
  }

  /** Every line written so far, as written. */
  lines(): string[] {
    return this.chunks.join('').split('\n').filter(Boolean);
  }

  /** Every line written so far, parsed (pino writes one JSON object a line). */
  records(): Record<string, unknown>[] {
    return this.lines().map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** The lines that contain `text`. */
  linesWith(text: string): string[] {
    return this.lines().filter((line) => line.includes(text));
  }
}
