/**
 * Consecutive runs of `rows`, in order, each of at most `maxRows` rows and `maxBytes` bytes as
 * `bytesOf` counts them; a row larger than `maxBytes` makes a run alone.
 */
export function* chunksByBytes<T>(
  rows: T[],
  bytesOf: (row: T) => number,
  maxBytes: number,
  maxRows: number,
): Generator<T[]> {
  let chunk: T[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = bytesOf(row);
    if (chunk.length > 0 && (chunk.length >= maxRows || bytes + size > maxBytes)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) {
    yield chunk;
  }
}
