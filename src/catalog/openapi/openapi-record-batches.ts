import type { FunctionRecord } from '../catalog-files.js';

/**
 * Function records as the reader thread hands them over: the rows' text in one buffer that is
 * transferred to the main thread, not copied. As a structured clone, Microsoft Graph beta's rows
 * (260 MB of text) were copied twice, into the message and into the main thread, while the reader's
 * heap was at its largest.
 */
export interface RecordBatch {
  names: string[];
  hashes: string[];
  /** The rows one after another, a byte per character: a row is ASCII (see asciiJson in catalog-files.ts). */
  rows: ArrayBuffer;
  /** Where each row ends in `rows`. */
  ends: Uint32Array<ArrayBuffer>;
}

export function packRecords(records: FunctionRecord[]): RecordBatch {
  const ends = new Uint32Array(records.length);
  let size = 0;
  records.forEach((record, i) => {
    size += record.row.length;
    ends[i] = size;
  });
  const rows = new ArrayBuffer(size);
  const bytes = Buffer.from(rows);
  records.forEach((record, i) => bytes.write(record.row, i === 0 ? 0 : ends[i - 1], 'latin1'));
  return { names: records.map((record) => record.name), hashes: records.map((record) => record.hash), rows, ends };
}

/** What postMessage moves to the other thread instead of copying. */
export function transferList(batch: RecordBatch): ArrayBuffer[] {
  return [batch.rows, batch.ends.buffer];
}

export function unpackRecords(batch: RecordBatch): FunctionRecord[] {
  // One string for the batch; each row is a slice of it, not a copy.
  const text = Buffer.from(batch.rows).toString('latin1');
  return batch.names.map((name, i) => ({
    name,
    hash: batch.hashes[i],
    row: text.slice(i === 0 ? 0 : batch.ends[i - 1], batch.ends[i]),
  }));
}
